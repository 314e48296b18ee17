"""Every function holds only the rights it uses (issue 22), read from the template as SAM
expands it (infra/transform.py): its own queue to poll, its own prefix of the raw bucket and no
bucket settings, its own database secret; and the private subnets refuse HTTP to private
addresses, so the fetching functions reach the internet only."""

import ipaddress
import re
from typing import Any

import pytest

from infra.transform import TEMPLATE, load, transformed
from newsdesk.aws.raw import FEEDS, PAGES
from newsdesk.storage.roles import CLUSTER, EXTRACTOR, READER, ROLES, WORKER

DATABASE_ROLE = {
    "WorkerFunction": WORKER,
    "ExtractorFunction": EXTRACTOR,
    "ClusterFunction": CLUSTER,
    "ReadFunction": READER,
}
# receives and deletes on every queue ("Resource": "*"): what SAM attaches for an SQS event
SQS_MANAGED = "AWSLambdaSQSQueueExecutionRole"


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return transformed(load(TEMPLATE))


def resources(template, kind: str) -> dict[str, dict[str, Any]]:
    return {n: r["Properties"] for n, r in template["Resources"].items() if r["Type"] == kind}


def plain(value: Any) -> Any:
    """A policy template's ``!Sub ["${name}", {name: value}]`` as the value it wraps."""
    if isinstance(value, dict) and "Fn::Sub" in value and isinstance(value["Fn::Sub"], list):
        text, names = value["Fn::Sub"]
        if text.startswith("${") and text.endswith("}") and text[2:-1] in names:
            return plain(names[text[2:-1]])
    return value


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def role_of(template, function: str) -> dict[str, Any]:
    role = template["Resources"][function]["Properties"]["Role"]["Fn::GetAtt"][0]
    props: dict[str, Any] = template["Resources"][role]["Properties"]
    return props


def statements(role: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for p in role.get("Policies", []) for s in p["PolicyDocument"]["Statement"]]


def granted(role: dict[str, Any], action: str) -> list[Any]:
    """The resources ``role``'s own policies allow ``action`` on."""
    return [
        plain(resource)
        for s in statements(role)
        if s["Effect"] == "Allow" and action in as_list(s["Action"])
        for resource in as_list(s["Resource"])
    ]


def functions(template) -> dict[str, dict[str, Any]]:
    return resources(template, "AWS::Lambda::Function")


def function_roles(template) -> dict[str, dict[str, Any]]:
    return {name: role_of(template, name) for name in functions(template)}


# --- SQS: each poller its own queue -----------------------------------------------------------


def test_no_function_may_receive_or_delete_on_every_queue(template):
    for name, role in function_roles(template).items():
        managed = [str(arn) for arn in role.get("ManagedPolicyArns", [])]
        assert not [arn for arn in managed if SQS_MANAGED in arn], name
        for statement in statements(role):
            actions = set(as_list(statement["Action"]))
            if actions & {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:*"}:
                assert "*" not in as_list(statement["Resource"]), (name, statement)


@pytest.mark.parametrize(
    ("function", "queue"),
    [("WorkerFunction", "OutletQueue"), ("ExtractorFunction", "ArticleQueue")],
)
def test_each_poller_polls_its_own_queue_only(template, function, queue):
    role = role_of(template, function)
    for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"):
        assert granted(role, action) == [{"Fn::GetAtt": [queue, "Arn"]}], action
    # and its event source is that queue
    (mapping,) = [
        m
        for m in resources(template, "AWS::Lambda::EventSourceMapping").values()
        if m["FunctionName"] == {"Ref": function}
    ]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [queue, "Arn"]}


# --- S3: each writer its own prefix, no bucket settings ---------------------------------------

BUCKET_SETTINGS = ("s3:PutLifecycleConfiguration", "s3:PutObjectAcl", "s3:PutBucket", "s3:Delete")


def test_no_function_may_change_the_raw_buckets_lifecycle_or_acls(template):
    for name, role in function_roles(template).items():
        for statement in statements(role):
            for action in as_list(statement["Action"]):
                assert not action.startswith(BUCKET_SETTINGS), (name, action)
                assert action != "s3:*", name


@pytest.mark.parametrize(
    ("function", "prefix", "actions"),
    [
        ("WorkerFunction", FEEDS, {"s3:PutObject", "s3:GetObject"}),
        ("ExtractorFunction", PAGES, {"s3:PutObject"}),
    ],
)
def test_each_writer_of_the_raw_layer_has_its_own_prefix(template, function, prefix, actions):
    role = role_of(template, function)
    objects = [
        (action, plain(resource))
        for s in statements(role)
        for action in as_list(s["Action"])
        if action.startswith("s3:") and action != "s3:ListBucket"
        for resource in as_list(s["Resource"])
    ]
    # the keys newsdesk.aws.raw writes for it, and nothing else
    assert {a for a, _ in objects} == actions
    assert {str(r) for _, r in objects} == {str({"Fn::Sub": f"${{RawBucket.Arn}}/{prefix}*"})}


def s3_objects(statements_: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(action, resource) of every S3 action the statements allow."""
    return {
        (action, str(plain(resource)))
        for s in statements_
        if s["Effect"] == "Allow"
        for action in as_list(s["Action"])
        if action.startswith("s3:")
        for resource in as_list(s["Resource"])
    }


DOSSIERS = str({"Fn::Sub": "${DossierBucket.Arn}/issues/*"})


def test_the_cluster_function_writes_and_reads_the_dossier_bucket_only(template):
    """Issue 40: its only S3 right is the dossiers' keys; no other function may touch them."""
    for name, role in function_roles(template).items():
        expected = (
            {("s3:PutObject", DOSSIERS), ("s3:GetObject", DOSSIERS)}
            if name == "ClusterFunction"
            else set()
        )
        assert {o for o in s3_objects(statements(role)) if "DossierBucket" in o[1]} == expected
        if name == "ClusterFunction":
            assert s3_objects(statements(role)) == expected


def test_the_generators_policy_reads_the_dossiers_and_nothing_else(template):
    (policy,) = resources(template, "AWS::IAM::ManagedPolicy").values()
    granted_ = policy["PolicyDocument"]["Statement"]
    assert [s["Effect"] for s in granted_] == ["Allow"]
    assert {str(plain(r)) for s in granted_ for r in as_list(s["Resource"])} == {DOSSIERS}
    assert {a for s in granted_ for a in as_list(s["Action"])} == {"s3:GetObject"}
    assert template["Outputs"]["IssueDossierReadPolicyArn"]["Value"] == {
        "Ref": "IssueDossierReadPolicy"
    }


def test_the_dossier_bucket_is_closed_encrypted_and_expires(template):
    bucket = template["Resources"]["DossierBucket"]["Properties"]
    assert set(bucket["PublicAccessBlockConfiguration"].values()) == {True}
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    (rule,) = bucket["LifecycleConfiguration"]["Rules"]
    assert rule["ExpirationInDays"] == {"Ref": "DossierRetentionDays"}
    assert template["Parameters"]["DossierRetentionDays"]["Default"] == 30


def test_only_the_worker_may_list_the_raw_bucket(template):
    # HeadObject answers a missing key 404 (not 403) only to a role that may list
    for name, role in function_roles(template).items():
        expected = [{"Fn::GetAtt": ["RawBucket", "Arn"]}] if name == "WorkerFunction" else []
        assert granted(role, "s3:ListBucket") == expected, name


# --- the database: each function its own secret and role --------------------------------------


def secret_of(template, function: str) -> Any:
    variables = functions(template)[function]["Environment"]["Variables"]
    return variables.get("DB_SECRET_ARN")


def test_each_database_function_reads_only_its_own_secret(template):
    secrets = resources(template, "AWS::SecretsManager::Secret")
    master = {"Fn::GetAtt": ["Database", "MasterUserSecret.SecretArn"]}
    for function, role_name in DATABASE_ROLE.items():
        secret = secret_of(template, function)
        # its own secret, which names its own database role
        assert secret == {"Ref": secret["Ref"]}, function
        spec = secrets[secret["Ref"]]["GenerateSecretString"]
        assert spec["SecretStringTemplate"] == f'{{"username": "{role_name}"}}', function
        assert spec["GenerateStringKey"] == "password"
        # and reads no other secret
        assert granted(role_of(template, function), "secretsmanager:GetSecretValue") == [secret]
    # the migrate function owns the tables (the master user) and sets the roles' passwords
    migrate = granted(role_of(template, "MigrateFunction"), "secretsmanager:GetSecretValue")
    assert secret_of(template, "MigrateFunction") == master
    assert migrate == [master] + [secret_of(template, f) for f in DATABASE_ROLE]
    # no other function reads a secret
    for function in set(functions(template)) - set(DATABASE_ROLE) - {"MigrateFunction"}:
        assert not granted(role_of(template, function), "secretsmanager:GetSecretValue")


def test_the_proxy_lets_each_role_log_in_and_the_migrations_set_their_passwords(template):
    logins = [secret_of(template, f) for f in ("MigrateFunction", *DATABASE_ROLE)]
    proxy = template["Resources"]["DatabaseProxy"]["Properties"]
    assert [a["SecretArn"] for a in proxy["Auth"]] == logins
    assert all(a["AuthScheme"] == "SECRETS" for a in proxy["Auth"])
    proxy_role = template["Resources"]["DatabaseProxyRole"]["Properties"]
    assert granted(proxy_role, "secretsmanager:GetSecretValue") == logins
    migrations = template["Resources"]["SchemaMigrations"]["Properties"]
    assert migrations["RoleSecrets"] == logins[1:]
    assert set(DATABASE_ROLE.values()) == set(ROLES)
    # a role's function starts once its password is set
    for function in DATABASE_ROLE:
        assert "SchemaMigrations" in as_list(template["Resources"][function].get("DependsOn"))


# --- the network: the internet, not the VPC ---------------------------------------------------


def acl_entries(template, egress: bool) -> list[dict[str, Any]]:
    vpc_cidr = template["Resources"]["Vpc"]["Properties"]["CidrBlock"]
    entries = []
    for entry in resources(template, "AWS::EC2::NetworkAclEntry").values():
        if entry["NetworkAclId"] == {"Ref": "PrivateNetworkAcl"} and entry["Egress"] == egress:
            cidr = entry["CidrBlock"]
            entries.append(entry | {"CidrBlock": vpc_cidr if isinstance(cidr, dict) else cidr})
    return sorted(entries, key=lambda e: int(e["RuleNumber"]))


def acl_allows(template, egress: bool, address: str, protocol: int, port: int) -> bool:
    """How the private subnets' ACL answers a packet: the first rule that matches, else deny;
    without an ACL of the stack's, the VPC's default one, which allows everything."""
    entries = acl_entries(template, egress)
    if not entries:
        return True
    for entry in entries:
        if int(entry["Protocol"]) not in (-1, protocol):
            continue
        ports = entry.get("PortRange")
        if ports and not int(ports["From"]) <= port <= int(ports["To"]):
            continue
        if ipaddress.ip_address(address) in ipaddress.ip_network(entry["CidrBlock"]):
            return bool(entry["RuleAction"] == "allow")
    return False


TCP, UDP = 6, 17
OUT = [
    # (address, protocol, port, allowed): addresses only classified here, never contacted
    ("10.40.10.25", TCP, 443, False),  # a web server in the VPC
    ("10.40.11.9", TCP, 80, False),
    ("10.40.0.17", TCP, 443, False),  # the public subnet
    ("172.31.5.5", TCP, 443, False),  # other private ranges (a peered network)
    ("192.168.0.10", TCP, 80, False),
    ("10.40.11.9", TCP, 5432, True),  # the proxy
    ("10.40.0.2", UDP, 53, True),  # the VPC's resolver, its base address + 2 (tested below)
    ("10.40.0.2", TCP, 53, True),
    ("203.0.113.10", TCP, 443, True),  # the internet (a documentation address)
    ("203.0.113.10", TCP, 80, True),
]


@pytest.mark.parametrize(("address", "protocol", "port", "allowed"), OUT)
def test_the_private_subnets_let_http_out_to_the_internet_only(
    template, address, protocol, port, allowed
):
    assert acl_allows(template, True, address, protocol, port) is allowed


def test_the_acl_lets_replies_and_the_vpc_in(template):
    assert acl_allows(template, False, "10.40.10.5", TCP, 5432)  # a function to the proxy
    assert acl_allows(template, False, "203.0.113.10", TCP, 40000)  # a feed's reply
    assert not acl_allows(template, False, "203.0.113.10", TCP, 22)


def test_every_subnet_of_the_functions_has_the_acl(template):
    associated = {
        a["SubnetId"]["Ref"]
        for a in resources(template, "AWS::EC2::SubnetNetworkAclAssociation").values()
        if a["NetworkAclId"] == {"Ref": "PrivateNetworkAcl"}
    }
    for name, function in functions(template).items():
        vpc = function.get("VpcConfig")
        if vpc:
            created = vpc["SubnetIds"]["Fn::If"][1]
            assert {s["Ref"] for s in created} == associated, name


def test_the_vpc_has_no_interface_endpoint_the_acl_would_cut_off(template):
    # an interface endpoint answers on 443 inside the VPC: it would need an allow before the deny
    for endpoint in resources(template, "AWS::EC2::VPCEndpoint").values():
        assert endpoint["VpcEndpointType"] == "Gateway"


# --- DNS: the VPC's resolver, not any server on the internet (issue 39, point 9) ---------------

AMAZON_DNS = "169.254.169.253/32"  # the Route 53 Resolver's link-local address, in every VPC
DNS_SERVER = "172.31.0.2"  # a given VPC's resolver (172.31.0.0/16: its base address + 2)


def decided(value: Any, conditions: dict[str, bool], parameters: dict[str, str]) -> Any:
    """``value`` with the template's conditions decided and its parameters put in: ``Fn::If``
    takes its branch, ``AWS::NoValue`` leaves a list, ``Fn::Sub`` of parameters is their text."""
    if isinstance(value, list):
        items = [decided(v, conditions, parameters) for v in value]
        return [v for v in items if v is not NO_VALUE]
    if not isinstance(value, dict):
        return value
    if "Fn::If" in value:
        name, yes, no = value["Fn::If"]
        return decided(yes if conditions[name] else no, conditions, parameters)
    if value == {"Ref": "AWS::NoValue"}:
        return NO_VALUE
    if "Fn::Sub" in value and isinstance(value["Fn::Sub"], str):
        return re.sub(r"\$\{(\w+)\}", lambda m: parameters[m[1]], value["Fn::Sub"])
    return {k: decided(v, conditions, parameters) for k, v in value.items()}


NO_VALUE = object()


def dns_destinations(template, vpc_id: str = "", dns_server: str = "") -> set[tuple[str, str]]:
    """(protocol, CIDR) the functions' security group lets DNS (port 53) out to, for a VPC
    the stack creates (no ``vpc_id``) or one it is given."""
    parameters = {"VpcId": vpc_id, "VpcDnsServer": dns_server}
    conditions = {
        name: decided_condition(template, name, parameters) for name in template["Conditions"]
    }
    group = template["Resources"]["FunctionSecurityGroup"]["Properties"]
    rules = decided(group["SecurityGroupEgress"], conditions, parameters)
    return {
        (rule["IpProtocol"], rule["CidrIp"])
        for rule in rules
        if int(rule["FromPort"]) <= 53 <= int(rule["ToPort"])
    }


def decided_condition(template, name: str, parameters: dict[str, str]) -> bool:
    """A condition of ``Fn::Equals``, ``Fn::Not``, ``Fn::Or`` and ``Condition`` decided."""
    condition = template["Conditions"][name]

    def value(term: Any) -> Any:
        if isinstance(term, dict) and "Ref" in term:
            return parameters.get(term["Ref"], f"<{term['Ref']}>")
        if isinstance(term, dict) and "Condition" in term:
            return decided_condition(template, term["Condition"], parameters)
        if isinstance(term, dict):
            (function, arguments), *_ = term.items()
            given = [value(a) for a in arguments]
            if function == "Fn::Equals":
                return given[0] == given[1]
            if function == "Fn::Not":
                return not given[0]
            if function == "Fn::Or":
                return any(given)
            if function == "Fn::And":
                return all(given)
            raise AssertionError(f"{name}: {function} is not decided here")
        return term

    return bool(value(condition))


def test_the_functions_may_query_only_the_vpcs_dns_resolver(template):
    """The attack: a function (or code it runs) sending DNS queries to any server on the
    internet, a channel out past the HTTP rules (the security group allowed UDP 53 to
    0.0.0.0/0; the ACL drops the answers, not the queries). DNS goes only to the VPC's Route
    53 Resolver: at the VPC's base address + 2 and at 169.254.169.253."""
    vpc_cidr = template["Resources"]["Vpc"]["Properties"]["CidrBlock"]
    resolver = f"{ipaddress.ip_network(vpc_cidr)[2]}/32"
    assert resolver == "10.40.0.2/32"
    both = {"udp", "tcp"}
    # a VPC the stack creates: its resolver at its base address + 2
    assert dns_destinations(template) == {(p, c) for p in both for c in (resolver, AMAZON_DNS)}
    # a given VPC: the server VpcDnsServer names (the template cannot read the VPC's range)
    given = dns_destinations(template, vpc_id="vpc-0abc", dns_server=DNS_SERVER)
    assert given == {(p, c) for p in both for c in (f"{DNS_SERVER}/32", AMAZON_DNS)}
    # and without it, the Amazon DNS server's address that every VPC has
    assert dns_destinations(template, vpc_id="vpc-0abc") == {(p, AMAZON_DNS) for p in both}
