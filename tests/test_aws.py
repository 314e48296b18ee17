"""Database settings in AWS: the secret (moto's Secrets Manager) and the proxy's address."""

import json
from urllib.parse import quote

import pytest

from newsdesk.core.errors import SettingsError
from newsdesk.core.settings import Settings
from newsdesk.storage.database import AMAZON_ROOT_CAS, database_from, dsn_from_secret


@pytest.fixture
def secret(aws_env):
    def create(value):
        client = aws_env.client("secretsmanager")
        return client.create_secret(Name=f"db-{len(value)}", SecretString=json.dumps(value))["ARN"]

    return create


def test_rds_managed_secret_with_the_proxy_endpoint(secret):
    arn = secret({"username": "newsdesk", "password": "p@ss/word"})
    dsn = dsn_from_secret(arn, "proxy.example.test", 5432, "newsdesk")
    assert dsn == (
        "postgresql://newsdesk:p%40ss%2Fword@proxy.example.test:5432/newsdesk"
        f"?sslmode=verify-full&sslrootcert={quote(str(AMAZON_ROOT_CAS), safe='')}"
    )


def test_rds_format_secret_carries_its_own_address(secret):
    arn = secret(
        {
            "username": "u",
            "password": "p",
            "host": "db.example.test",
            "port": 6432,
            "dbname": "news",
        }
    )
    assert dsn_from_secret(arn, None, 5432, "newsdesk").startswith(
        "postgresql://u:p@db.example.test:6432/news?sslmode=verify-full&sslrootcert="
    )


def test_a_secret_without_an_address_needs_db_host(secret):
    arn = secret({"username": "u", "password": "p"})
    with pytest.raises(SettingsError, match="DB_HOST"):
        dsn_from_secret(arn, None, 5432, "newsdesk")


def test_database_needs_a_url_or_a_secret():
    with pytest.raises(SettingsError, match="DATABASE_URL"):
        database_from(Settings())
