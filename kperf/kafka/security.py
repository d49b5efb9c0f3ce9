"""How kperf's clients reach a secured cluster: SASL (PLAIN, SCRAM) and TLS settings, and keeping them secret.

The settings come from a client properties file named by ``$KPERF_CLIENT_CONFIG``
(``kperf --client-config FILE`` sets it) and from ``KPERF_*`` environment
variables, read in whichever process makes a client: the CLI, a papermill
kernel, a producer worker, a stock tool's properties file. They are never a
parameter, because papermill writes parameters into the executed notebook and
kperf writes them into every result record: a password passed that way would be
written down. Results record only the protocol and mechanism (TLS and SASL cost
throughput, so they are conditions of a measurement).

The file may use the Java client's names (``sasl.jaas.config``, a PEM
``ssl.truststore.location``: the file ``kafka-console-producer`` takes) or
librdkafka's (``sasl.username``, ``sasl.password``, ``ssl.ca.location``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kperf.errors import KperfError
from kperf.kafka import properties

CONFIG_ENV = "KPERF_CLIENT_CONFIG"
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
# The settings kperf reads, by their librdkafka names; each can also come from
# an environment variable (KPERF_ + the name upper-cased, dots as underscores) that wins over the file.
SETTINGS = (
    "security.protocol",
    "sasl.mechanism",
    "sasl.username",
    "sasl.password",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
)
ENVIRONMENT = {name: "KPERF_" + name.upper().replace(".", "_") for name in SETTINGS}
# Other names of the same settings: librdkafka's older plural, the Java client's (PEM) truststore.
JAVA_NAMES = {"sasl.mechanisms": "sasl.mechanism", "ssl.truststore.location": "ssl.ca.location"}
# Values of settings whose name holds one of these are never written down.
SECRET_MARKERS = ("password", "secret", "jaas", "token", "ssl.key", "ssl.keystore.certificate")
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Security:
    """A client's security settings. The default is Kafka's: PLAINTEXT, no authentication."""

    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_location: Path | None = None
    certificate_location: Path | None = None
    key_location: Path | None = None
    key_password: str | None = field(default=None, repr=False)
    verify_hostname: bool = True

    def __post_init__(self) -> None:
        """Refuse what no client could connect with, naming the setting, before any load."""
        if self.protocol not in PROTOCOLS:
            raise KperfError(f"security.protocol must be one of {', '.join(PROTOCOLS)}, got {self.protocol!r}")
        sasl, tls = self.protocol.startswith("SASL_"), self.protocol.endswith("SSL")
        if sasl:
            if self.mechanism not in MECHANISMS:
                raise KperfError(f"{self.protocol} needs sasl.mechanism, one of {', '.join(MECHANISMS)} "
                                 f"(got {self.mechanism!r})")
            if not self.username or not self.password:
                raise KperfError(f"{self.protocol} needs a SASL username and password (sasl.username and "
                                 "sasl.password, or sasl.jaas.config)")
        elif self.mechanism or self.username or self.password:
            raise KperfError(f"SASL settings are given but security.protocol is {self.protocol}: "
                             "use SASL_PLAINTEXT or SASL_SSL")
        files = {"ssl.ca.location": self.ca_location, "ssl.certificate.location": self.certificate_location,
                 "ssl.key.location": self.key_location}
        if not tls and any(files.values()):
            raise KperfError(f"TLS files are given but security.protocol is {self.protocol}: use SSL or SASL_SSL")
        for name, path in files.items():
            if path is not None and not path.is_file():
                raise KperfError(f"{name}: no such file {path}")
        if (self.certificate_location is None) != (self.key_location is None):
            raise KperfError("a client certificate needs both ssl.certificate.location and ssl.key.location")

    def describe(self) -> dict[str, str]:
        """What a result records: the protocol and mechanism, never a credential."""
        return {"security_protocol": self.protocol, "sasl_mechanism": self.mechanism or "none"}

    def librdkafka(self) -> dict[str, str]:
        """The settings for a confluent-kafka client."""
        config = {"security.protocol": self.protocol}
        if self.mechanism:
            config.update({"sasl.mechanism": self.mechanism, "sasl.username": self.username or "",
                           "sasl.password": self.password or ""})
        if self.protocol.endswith("SSL"):
            config["ssl.endpoint.identification.algorithm"] = "https" if self.verify_hostname else "none"
        optional = {"ssl.ca.location": self.ca_location, "ssl.certificate.location": self.certificate_location,
                    "ssl.key.location": self.key_location, "ssl.key.password": self.key_password}
        config.update({k: str(v) for k, v in optional.items() if v is not None})
        return config

    def java(self) -> dict[str, str]:
        """The settings for Kafka's Java tools (a properties file): JAAS for SASL, PEM stores for TLS.

        A client key is given inline (``ssl.keystore.key``): Kafka reads a PEM
        key from a file only when it is encrypted, and needs it in PKCS#8.
        """
        config = {"security.protocol": self.protocol}
        if self.mechanism:
            config["sasl.mechanism"] = self.mechanism
            config["sasl.jaas.config"] = jaas(self.mechanism, self.username or "", self.password or "")
        if self.protocol.endswith("SSL"):
            config["ssl.endpoint.identification.algorithm"] = "https" if self.verify_hostname else ""
        if self.ca_location is not None:
            config.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.ca_location)})
        if self.certificate_location is not None and self.key_location is not None:
            config.update({
                "ssl.keystore.type": "PEM",
                "ssl.keystore.certificate.chain": self.certificate_location.read_text(),
                "ssl.keystore.key": self.key_location.read_text(),
            })
            if self.key_password:
                config["ssl.key.password"] = self.key_password
        return config


def jaas(mechanism: str, username: str, password: str, options: Mapping[str, str] | None = None) -> str:
    """A sasl.jaas.config line (quotes and backslashes escaped, as JAAS reads them); ``options`` adds more,
    such as a broker's ``user_<name>`` entries."""
    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    pairs = {"username": username, "password": password, **(options or {})}
    return f"{LOGIN_MODULES[mechanism]} required " + " ".join(f"{k}={quoted(v)}" for k, v in pairs.items()) + ";"


def from_settings(settings: Mapping[str, str], source: str) -> Security:
    """Security from librdkafka- or Java-named ``settings``; ``source`` names where they came from in errors."""
    values: dict[str, str] = {}
    for name, value in settings.items():
        name = JAVA_NAMES.get(name, name)
        if name == "sasl.jaas.config":
            options = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _JAAS_OPTION.findall(value)}
            if "username" not in options or "password" not in options:
                raise KperfError(f"{source}: sasl.jaas.config needs username=\"...\" and password=\"...\"")
            values.setdefault("sasl.username", options["username"])
            values.setdefault("sasl.password", options["password"])
        elif name == "ssl.truststore.type":
            if value.upper() != "PEM":
                raise KperfError(f"{source}: ssl.truststore.type {value} cannot be read by the Python client: "
                                 "give the CA certificates as a PEM file (ssl.truststore.type=PEM)")
        elif name in SETTINGS:
            values[name] = value
        else:
            raise KperfError(f"{source}: {name} is not a security setting kperf reads "
                             f"(it reads {', '.join(SETTINGS)}, sasl.jaas.config and ssl.truststore.*)")

    def path(name: str) -> Path | None:
        return Path(values[name]).expanduser() if values.get(name) else None

    return Security(
        protocol=values.get("security.protocol", "PLAINTEXT").upper(),
        mechanism=values["sasl.mechanism"].upper() if values.get("sasl.mechanism") else None,
        username=values.get("sasl.username") or None,
        password=values.get("sasl.password") or None,
        ca_location=path("ssl.ca.location"),
        certificate_location=path("ssl.certificate.location"),
        key_location=path("ssl.key.location"),
        key_password=values.get("ssl.key.password") or None,
        verify_hostname=values.get("ssl.endpoint.identification.algorithm", "https").lower() not in ("", "none"),
    )


def current(environ: Mapping[str, str] | None = None) -> Security:
    """This process's security settings: the $KPERF_CLIENT_CONFIG file, overridden by KPERF_* variables."""
    environ = os.environ if environ is None else environ
    settings: dict[str, str] = {}
    source = "the KPERF_* environment variables"
    if environ.get(CONFIG_ENV):
        path = Path(environ[CONFIG_ENV]).expanduser()
        if not path.is_file():
            raise KperfError(f"{CONFIG_ENV}: no such client properties file {path}")
        settings = properties.read(path)
        source = str(path)
    settings.update({name: environ[var] for name, var in ENVIRONMENT.items() if environ.get(var)})
    return from_settings(settings, source)


def refuse_in_parameters(config: Mapping[str, Any], role: str) -> None:
    """A connection setting passed as a client parameter would be recorded with the results: refuse it."""
    for name in config:
        if name.startswith(("sasl.", "ssl.")) or name == "security.protocol":
            raise KperfError(f"{name} is a connection setting, not a {role} parameter: put it in the client "
                             f"properties file ({CONFIG_ENV} or --client-config) so it is never written down")


def redact(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` fit to be written down: values of secret settings (passwords, keys, JAAS) masked."""
    return {k: "***" if any(m in k.lower() for m in SECRET_MARKERS) else v for k, v in config.items()}
