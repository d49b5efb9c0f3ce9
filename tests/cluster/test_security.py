"""Secured clusters: SASL and TLS settings for both clients, a secured local cluster, and no secret written down."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kperf.drivers import stock_tools
from kperf.drivers.consumer import consume
from kperf.drivers.producer import produce
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import KperfError
from kperf.kafka import clients, properties, security, topics
from kperf.kafka.security import Security
from kperf.results import ResultStore
from tests.helpers import kperf, local_cluster

PASSWORD = 'pa"ss\\word=1'  # a quote, a backslash and '=': what JAAS and .properties must escape


@pytest.fixture(autouse=True)
def no_inherited_security(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (security.CONFIG_ENV, *security.ENVIRONMENT.values()):
        monkeypatch.delenv(name, raising=False)


def test_properties_round_trip_and_java_syntax(tmp_path: Path) -> None:
    config = {"sasl.jaas.config": security.jaas("PLAIN", "u", PASSWORD), "a key": "  lead", "ü": "line\nbreak"}
    assert properties.read(properties.write(tmp_path / "w.properties", config)) == config
    (tmp_path / "h.properties").write_text(
        "# comment\n! comment\n  one = 1\ntwo:2\nthree 3 and more\nlong = a\\\n    b\\\\\nempty=\n"
    )
    assert properties.read(tmp_path / "h.properties") == {
        "one": "1", "two": "2", "three": "3 and more", "long": "ab\\", "empty": ""
    }


def test_a_java_client_file_gives_both_clients_the_same_credentials(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not checked until a client connects")
    path = properties.write(tmp_path / "client.properties", {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": security.jaas("SCRAM-SHA-512", "alice", PASSWORD),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca),
    })
    found = security.current({security.CONFIG_ENV: str(path)})
    assert found.librdkafka() == {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice",
        "sasl.password": PASSWORD, "ssl.endpoint.identification.algorithm": "https", "ssl.ca.location": str(ca),
    }
    java = found.java()
    assert java["sasl.jaas.config"] == security.jaas("SCRAM-SHA-512", "alice", PASSWORD)
    assert java["ssl.truststore.location"] == str(ca) and java["ssl.truststore.type"] == "PEM"
    # Environment variables override the file; nothing a result records names the password.
    plain = security.current({security.CONFIG_ENV: str(path), "KPERF_SASL_MECHANISM": "PLAIN"})
    assert plain.librdkafka()["sasl.mechanism"] == "PLAIN" and plain.password == PASSWORD
    assert PASSWORD not in repr(plain) and PASSWORD not in str(plain.describe())
    assert plain.describe() == {"security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN"}


@pytest.mark.parametrize(("settings", "message"), [
    ({"security.protocol": "SASL"}, "security.protocol must be one of"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", "sasl.username": "u",
      "sasl.password": "p"}, "needs sasl.mechanism, one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u"},
     "needs a SASL username and password"),
    ({"sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "p"},
     "SASL settings are given but security.protocol is PLAINTEXT"),
    ({"security.protocol": "SSL", "ssl.ca.location": "/nonexistent/ca.pem"}, "ssl.ca.location: no such file"),
    ({"security.protocol": "SSL", "ssl.truststore.type": "JKS"}, "ssl.truststore.type JKS cannot be read"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": "x required;"},
     'sasl.jaas.config needs username="..." and password="..."'),
    ({"security.protocol": "SSL", "client.id": "me"}, "client.id is not a security setting kperf reads"),
])
def test_bad_security_settings_are_one_line_errors(tmp_path: Path, settings: dict[str, str], message: str) -> None:
    path = properties.write(tmp_path / "client.properties", settings)
    with pytest.raises(KperfError, match="^[^\n]*$") as caught:
        security.current({security.CONFIG_ENV: str(path)})
    assert message in str(caught.value)


def test_a_missing_file_and_a_certificate_without_key_are_refused(tmp_path: Path) -> None:
    with pytest.raises(KperfError, match="no such client properties file"):
        security.current({security.CONFIG_ENV: str(tmp_path / "absent.properties")})
    cert = tmp_path / "client.pem"
    cert.write_text("pem")
    with pytest.raises(KperfError, match="needs both ssl.certificate.location and ssl.key.location"):
        Security(protocol="SSL", certificate_location=cert)


def test_connection_settings_are_refused_as_client_parameters() -> None:
    """Parameters are recorded with the results and in executed notebooks: a password there would be written down."""
    with pytest.raises(KperfError, match="sasl.password is a connection setting, not a producer parameter"):
        clients.check_config({"sasl.password": "x"}, role="producer")
    assert security.redact({"sasl.jaas.config": "x", "ssl.keystore.key": "k", "acks": "all"}) == {
        "sasl.jaas.config": "***", "ssl.keystore.key": "***", "acks": "all"
    }


def produce_and_consume_with_both_clients(bootstrap: str, topic: str) -> None:
    """The Python client and the three stock tools each move records through ``topic``."""
    assert produce(ProducerSpec(bootstrap, topic, 100, records=2_000)).records == 2_000
    assert stock_tools.java_produce(bootstrap, topic, 2_000, 100).records == 2_000
    assert consume(ConsumerSpec(bootstrap, topic, records=4_000)).records == 4_000
    assert stock_tools.java_consume(bootstrap, topic, 4_000).records >= 4_000
    assert stock_tools.java_end_to_end(bootstrap, topic, 20, 100).records == 20


@pytest.mark.cluster
def test_sasl_cluster_serves_scram_and_plain_and_refuses_strangers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with local_cluster(1, tmp_path / "cluster", security_protocol="SASL_PLAINTEXT") as cluster:
        state = cluster.state
        assert state is not None and state.client_config is not None
        assert oct(state.client_config.stat().st_mode & 0o777) == "0o600"
        jaas = [v for k, v in state.broker_config.items() if k.endswith("sasl.jaas.config")]
        assert jaas and set(jaas) == {"***"}  # cluster.json (and every result's environment) masks the JAAS lines
        with pytest.raises(KperfError, match="if it is secured, give its client properties"):
            clients.metadata(cluster.bootstrap, timeout=3)  # no credentials
        monkeypatch.setenv(security.CONFIG_ENV, str(state.client_config))  # SCRAM-SHA-512, from the file
        topics.create(cluster.bootstrap, "scram", 1, 1)
        produce_and_consume_with_both_clients(cluster.bootstrap, "scram")
        # PLAIN, from environment variables alone.
        password = security.current().password or ""
        assert password and password not in json.dumps(state.to_json())
        monkeypatch.delenv(security.CONFIG_ENV)
        monkeypatch.setenv("KPERF_SECURITY_PROTOCOL", "SASL_PLAINTEXT")
        monkeypatch.setenv("KPERF_SASL_MECHANISM", "PLAIN")
        monkeypatch.setenv("KPERF_SASL_USERNAME", "kperf")
        monkeypatch.setenv("KPERF_SASL_PASSWORD", password)
        topics.create(cluster.bootstrap, "plain", 1, 1)
        produce_and_consume_with_both_clients(cluster.bootstrap, "plain")
        monkeypatch.setenv("KPERF_SASL_PASSWORD", password + "x")
        with pytest.raises(KperfError, match="cannot reach Kafka .* over SASL_PLAINTEXT"):
            clients.metadata(cluster.bootstrap, timeout=3)


@pytest.mark.cluster
def test_ssl_cluster_serves_both_clients_that_trust_its_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with local_cluster(1, tmp_path / "cluster", security_protocol="SSL") as cluster:
        assert cluster.state is not None and cluster.state.client_config is not None
        with pytest.raises(KperfError, match="cannot reach Kafka"):
            clients.metadata(cluster.bootstrap, timeout=3)  # PLAINTEXT to a TLS listener
        monkeypatch.setenv(security.CONFIG_ENV, str(cluster.state.client_config))
        topics.create(cluster.bootstrap, "tls", 1, 1)
        produce_and_consume_with_both_clients(cluster.bootstrap, "tls")
        # Named by its bootstrap alone, kperf's own secured cluster is reached with its client properties,
        # by the command's first reachability check too.
        monkeypatch.delenv(security.CONFIG_ENV)
        result = kperf(tmp_path, "produce", "--bootstrap", cluster.bootstrap, "--topic", "tls", "--records", "2500",
                       "--throughput", "1000")  # 2.5 s: long enough for a rate
        assert result.returncode == 0, result.stderr


def files_holding(root: Path, secret: str) -> list[Path]:
    """Every file under ``root`` whose bytes contain ``secret`` (also as JSON or .properties would escape it)."""
    forms = {secret, secret.replace("\\", "\\\\").replace('"', '\\"'), properties.escape(secret)}
    needles = [form.encode() for form in forms]
    return [p for p in root.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)]


@pytest.mark.cluster
@pytest.mark.timeout(1200, method="signal")  # a whole study: twice the cluster tests' limit
def test_a_study_on_a_sasl_ssl_cluster_writes_its_password_nowhere(tmp_path: Path) -> None:
    data, secured = tmp_path / "data", tmp_path / "secured"
    with local_cluster(1, secured, security_protocol="SASL_SSL") as cluster:
        assert cluster.state is not None and cluster.state.client_config is not None
        client_config = cluster.state.client_config
        password = security.current({security.CONFIG_ENV: str(client_config)}).password
        assert password
        # One batch point (each client's producer tool once) and end_to_end (both clients' consumers): every
        # client that takes the password, each once.
        result = kperf(data, "--client-config", str(client_config), "study", "batch", "end_to_end",
                       "--profile", "smoke", "--bootstrap", cluster.bootstrap, "--set", "batch.throughputs=[-1]",
                       "--set", "batch.batch_sizes=[65536]", "--set", "batch.clients=[python,java]", timeout=1100)
        assert result.returncode == 0, result.stderr[-2000:]
    run_dirs = list((data / "runs").iterdir())
    assert len(run_dirs) == 1 and (run_dirs[0] / "report.html").is_file()
    written = [p for p in data.rglob("*") if p.is_file()]
    assert any(p.suffix == ".ipynb" for p in written) and any(p.suffix == ".parquet" for p in written)
    assert files_holding(data, password) == []
    assert password not in result.stdout + result.stderr
    # The records say what the numbers were measured over.
    results = ResultStore.of_run(run_dirs[0]).load()  # the records (their time series lie beside them)
    assert set(results["env.security_protocol"]) == {"SASL_SSL"}
    assert set(results["env.sasl_mechanism"]) == {"SCRAM-SHA-512"}
    # While the cluster's own folder must hold it (the brokers authenticate with it), only its owner can read it.
    assert files_holding(secured, password)
    assert all(p.stat().st_mode & 0o077 == 0 for p in files_holding(secured, password))
    assert (secured / "security").stat().st_mode & 0o077 == 0


def test_a_bad_client_config_stops_a_study_before_anything_is_written(tmp_path: Path) -> None:
    bad = properties.write(tmp_path / "client.properties", {"security.protocol": "SASL_SSL"})
    result = kperf(tmp_path / "data", "--client-config", str(bad), "study", "--profile", "smoke", timeout=180)
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "SASL_SSL needs sasl.mechanism" in result.stderr and not (tmp_path / "data").exists()
