"""A loopback stand-in for RDS Proxy: PostgreSQL's TLS on 127.0.0.1, ended here with a
certificate of a test authority, and the connection carried on in plain to the embedded
PostgreSQL's Unix socket (pgserver is built without OpenSSL, as RDS Proxy too ends the client's
TLS itself). The client is libpq, unchanged: what it verifies is what it verifies in AWS."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
# the certificates' validity is fixed around now, so that none is expired or not yet valid
_NOW = datetime.datetime.now(datetime.UTC)


@dataclass(frozen=True)
class Authority:
    """A certificate authority of the test's own: its certificate (a file, to trust it) and
    the server certificates it signs."""

    folder: Path
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    @classmethod
    def create(cls, folder: Path, name: str = "newsdesk test root") -> Authority:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        certificate = (
            _builder(subject, subject, key)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(key, hashes.SHA256())
        )
        folder.mkdir(parents=True, exist_ok=True)
        authority = cls(folder, key, certificate)
        authority.root_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        return authority

    @property
    def root_file(self) -> Path:
        return self.folder / "root.pem"

    def server(self, names: list[str], addresses: list[str]) -> tuple[Path, Path]:
        """A server certificate for ``names`` and ``addresses`` (its chain file, its key file)."""
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, (names or addresses)[0])])
        alternatives: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
        alternatives += [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
        certificate = (
            _builder(subject, self.certificate.subject, key)
            .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        stem = self.folder / "-".join(names + addresses)
        chain, key_file = stem.with_suffix(".chain.pem"), stem.with_suffix(".key.pem")
        chain.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return chain, key_file


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_NOW - datetime.timedelta(days=1))
        .not_valid_after(_NOW + datetime.timedelta(days=30))
    )


class TlsProxy:
    """PostgreSQL over TLS on 127.0.0.1:``port`` (a free one), each connection carried to the
    Unix socket ``target``. Run as a context manager; ``handshakes_failed`` counts the clients
    that gave up during the TLS handshake (a certificate they refused)."""

    def __init__(self, target: Path, chain: Path, key: Path) -> None:
        self._target = str(target)
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._context.load_cert_chain(chain, key)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self.port = 0
        self.handshakes_failed = 0

    def __enter__(self) -> TlsProxy:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        self.port = started.result(timeout=10)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    async def _start(self) -> int:
        self._server = await asyncio.start_server(self._carry, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _carry(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError, ConnectionError):
            try:
                while True:  # a GSSAPI request first is answered no, then TLS is asked for
                    length, code = struct.unpack("!II", await reader.readexactly(8))
                    if (length, code) != (8, GSSENC_REQUEST):
                        break
                    writer.write(b"N")
                if (length, code) != (8, SSL_REQUEST):
                    return  # RDS Proxy requires TLS (RequireTLS): no plain connection
                writer.write(b"S")
                await writer.drain()
                try:
                    await writer.start_tls(self._context)
                except (ssl.SSLError, OSError):
                    self.handshakes_failed += 1
                    return
                server_reader, server_writer = await asyncio.open_unix_connection(self._target)
                await asyncio.gather(_pump(reader, server_writer), _pump(server_reader, writer))
            finally:
                writer.close()


async def _pump(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            target.write(data)
            await target.drain()
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if target.can_write_eof():
                target.write_eof()


@contextlib.contextmanager
def tls_proxy(target: Path, authority: Authority, names: list[str]) -> Iterator[TlsProxy]:
    """The proxy with a certificate of ``authority`` for ``names`` (host names or addresses)."""
    addresses = [n for n in names if n.replace(".", "").isdigit()]
    chain, key = authority.server([n for n in names if n not in addresses], addresses)
    with TlsProxy(target, chain, key) as proxy:
        yield proxy
