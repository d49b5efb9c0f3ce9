"""The local cluster's users, passwords and TLS certificate, so kperf can test itself against a secured cluster.

Made once per cluster folder, in ``security/`` (mode 0700): a random password
for the client user ``kperf`` (valid for PLAIN and SCRAM-SHA-512) and one for
the brokers' own PLAIN login, and a private CA with one certificate for
127.0.0.1 that every node serves. ``client.properties`` there is what a client
needs (``kperf`` points $KPERF_CLIENT_CONFIG at it on its own cluster; Kafka's
console tools take it as ``--command-config``).
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kperf.kafka import properties
from kperf.kafka.security import LOGIN_MODULES, Security, jaas

FOLDER = "security"
CLIENT_USER = "kperf"
BROKER_USER = "broker"
SCRAM = "SCRAM-SHA-512"
CERTIFICATE_DAYS = 365


@dataclass(frozen=True)
class Credentials:
    """The passwords of a cluster folder and where its TLS files live."""

    folder: Path
    client_password: str
    broker_password: str

    @property
    def ca(self) -> Path:
        """The private CA's certificate (made with the broker's on first use: RSA keys take a moment)."""
        if not (self.folder / "broker.key").is_file():
            _make_certificates(self.folder)
        return self.folder / "ca.pem"

    @property
    def client_properties(self) -> Path:
        return self.folder / "client.properties"

    def scram_argument(self) -> str:
        """The storage tool's --add-scram value that creates the client's SCRAM user when a node is formatted."""
        return f"{SCRAM}=[name={CLIENT_USER},password={self.client_password}]"

    def client(self, protocol: str) -> Security:
        """What a client of a ``protocol`` listener of this cluster connects with (SCRAM for SASL)."""
        sasl = protocol.startswith("SASL_")
        return Security(
            protocol=protocol,
            mechanism=SCRAM if sasl else None,
            username=CLIENT_USER if sasl else None,
            password=self.client_password if sasl else None,
            ca_location=self.ca if protocol.endswith("SSL") else None,
        )

    def broker_settings(self, protocol: str) -> dict[str, str]:
        """The server.properties settings that secure a ``protocol`` listener named after it."""
        prefix = f"listener.name.{protocol.lower()}"
        settings: dict[str, str] = {}
        if protocol.startswith("SASL_"):
            # The broker logs in to its peers as BROKER_USER; user_<name> entries are the PLAIN users it accepts.
            plain_users = {f"user_{BROKER_USER}": self.broker_password, f"user_{CLIENT_USER}": self.client_password}
            settings.update({
                "sasl.enabled.mechanisms": f"PLAIN,{SCRAM}",
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                f"{prefix}.plain.sasl.jaas.config": jaas("PLAIN", BROKER_USER, self.broker_password, plain_users),
                f"{prefix}.{SCRAM.lower()}.sasl.jaas.config": f"{LOGIN_MODULES[SCRAM]} required;",
            })
        if protocol.endswith("SSL"):
            ca = self.ca
            settings.update({
                "ssl.keystore.type": "PEM",
                "ssl.keystore.certificate.chain": (self.folder / "broker.pem").read_text(),
                "ssl.keystore.key": (self.folder / "broker.key").read_text(),
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(ca),
            })
        return settings

    def write_client_properties(self, protocol: str) -> Path:
        """client.properties for a ``protocol`` listener, in the Java client's names (mode 0600)."""
        return properties.write(self.client_properties, self.client(protocol).java(), private=True)


def for_cluster(directory: Path) -> Credentials:
    """The cluster folder's credentials, made on first use and the same ever after (its SCRAM user is stored
    in the formatted metadata, so the password must outlive restarts)."""
    folder = directory / FOLDER
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    stored = folder / "credentials.json"
    if not stored.is_file():
        made = {"client_password": secrets.token_urlsafe(18), "broker_password": secrets.token_urlsafe(18)}
        stored.touch(mode=0o600)
        stored.write_text(json.dumps(made))
    return Credentials(folder=folder, **json.loads(stored.read_text()))


def _make_certificates(folder: Path) -> None:
    """A private CA (ca.pem) and a certificate for 127.0.0.1 and localhost signed by it (broker.pem, broker.key)."""
    now = datetime.datetime.now(datetime.UTC)
    valid_from, valid_to = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=CERTIFICATE_DAYS)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kperf local cluster CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(valid_from).not_valid_after(valid_to)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(valid_from).not_valid_after(valid_to)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "broker.pem").write_bytes(cert.public_bytes(pem) + ca.public_bytes(pem))
    key_file = folder / "broker.key"
    key_file.touch(mode=0o600)
    # PKCS#8: the only unencrypted form Kafka's PEM key store reads.
    key_file.write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
