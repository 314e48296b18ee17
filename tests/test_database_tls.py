"""The functions' database connections verify the proxy (issue 22): sslmode=verify-full against
the Amazon root CAs shipped with the package (RDS Proxy's certificates come from ACM), or the
roots DB_SSLROOTCERT names. Against a loopback proxy with a certificate of the test's own
authority, in front of the embedded PostgreSQL (tests/tls_proxy.py)."""

import json
import warnings
from pathlib import Path

import psycopg2.extensions
import pytest
from cryptography import x509
from cryptography.utils import CryptographyDeprecationWarning
from cryptography.x509.oid import NameOID

from infra.amazon_roots import LABELS, amazon_roots
from newsdesk.core.errors import StoreError
from newsdesk.core.settings import Settings
from newsdesk.storage.database import AMAZON_ROOT_CAS, database_from
from tests.tls_proxy import Authority, tls_proxy


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return Authority.create(tmp_path_factory.mktemp("authority"))


@pytest.fixture
def postgres(postgres_url: str) -> tuple[Path, str]:
    """The embedded PostgreSQL's Unix socket and database name."""
    dsn = psycopg2.extensions.parse_dsn(postgres_url)
    if not dsn.get("host", "").startswith("/"):
        pytest.skip("the proxy stands in front of the embedded PostgreSQL's Unix socket")
    return Path(dsn["host"]) / f".s.PGSQL.{dsn.get('port', 5432)}", dsn.get("dbname", "postgres")


@pytest.fixture
def worker_secret(aws_env) -> str:
    """The worker's secret as the template declares it: a username and a generated password."""
    value = {"username": "newsdesk_worker", "password": "generated0password0of0forty0characters0"}
    client = aws_env.client("secretsmanager")
    created = client.create_secret(Name="newsdesk/database/worker", SecretString=json.dumps(value))
    return str(created["ARN"])


def settings(secret: str, port: int, name: str, roots: Path | None) -> Settings:
    """The worker's settings in AWS, its proxy on 127.0.0.1 (named by its address)."""
    return Settings(
        db_secret_arn=secret, db_host="127.0.0.1", db_port=port, db_name=name, db_sslrootcert=roots
    )


def test_the_proxy_is_trusted_when_its_certificate_chains_to_the_roots(
    authority, postgres, worker_secret
):
    socket, name = postgres
    with tls_proxy(socket, authority, ["127.0.0.1"]) as proxy:
        database = database_from(settings(worker_secret, proxy.port, name, authority.root_file))
        with database.transaction() as cursor:
            cursor.execute("SELECT current_user")
            user = cursor.fetchone()
        info = database.connection().info
        tls = (info.ssl_in_use, info.ssl_attribute("protocol"))
        database.close()
    assert user == ("newsdesk_worker",)  # its own role, through the proxy
    assert tls == (True, tls[1])
    assert tls[1] in {"TLSv1.2", "TLSv1.3"}


def test_a_proxy_the_amazon_roots_do_not_vouch_for_is_refused(authority, postgres, worker_secret):
    # GIVEN a proxy whose certificate is not Amazon's (as a machine in the middle would present)
    socket, name = postgres
    with tls_proxy(socket, authority, ["127.0.0.1"]) as proxy:
        # WHEN the worker connects with the default roots (the Amazon root CAs)
        database = database_from(settings(worker_secret, proxy.port, name, None))
        # THEN it refuses the certificate and sends nothing (sslmode=require would go on)
        with pytest.raises(StoreError, match="certificate verify failed"):
            database.connection()
    assert proxy.handshakes_failed == 1


def test_a_certificate_for_another_host_is_refused(authority, postgres, worker_secret):
    # GIVEN a proxy with a good certificate of the trusted authority, but for another name
    socket, name = postgres
    with tls_proxy(socket, authority, ["elsewhere.proxy.test"]) as proxy:
        database = database_from(settings(worker_secret, proxy.port, name, authority.root_file))
        # THEN verify-full refuses it: the certificate does not name 127.0.0.1
        with pytest.raises(StoreError, match="does not match host name"):
            database.connection()


def test_the_shipped_roots_are_certifis_amazon_trust_services_roots():
    # the file is what `make amazon-roots` writes from the installed certifi
    import certifi

    bundle = Path(certifi.where()).read_text(encoding="ascii")
    assert AMAZON_ROOT_CAS.read_text(encoding="ascii") == amazon_roots(bundle)
    # and holds those roots only: self-signed authorities named as the labels
    with warnings.catch_warnings():  # Starfield Services G2's serial number is 0, as issued
        warnings.simplefilter("ignore", CryptographyDeprecationWarning)
        roots = x509.load_pem_x509_certificates(AMAZON_ROOT_CAS.read_bytes())
    names = [r.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value for r in roots]
    assert names == list(LABELS)
    for root in roots:
        assert root.subject == root.issuer
        assert root.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
