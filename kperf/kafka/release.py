"""The Apache Kafka release kperf runs: from Maven Central, or a user's KAFKA_HOME.

kperf needs real Kafka processes (the broker, the storage formatter and, for
comparisons, the stock perf tools). Two sources, in this order:

* ``KAFKA_HOME`` pointing at an official distribution: its ``bin/*.sh``
  scripts are used as they are, so the user's own settings apply;
* otherwise a release from Maven Central: the one pinned in ``kafka-pom.xml``
  (the newest 4.x when it was last pinned), or the one ``KPERF_KAFKA_VERSION``
  names (``kperf --kafka-version``), so the same study can run on two releases
  and be compared. Maven copies its jars into a git-ignored cache the first
  time; later runs reuse them, offline.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kperf.errors import KperfError
from kperf.paths import cache_dir

POM = Path(__file__).with_name("kafka-pom.xml")
EXPORTER_POM = Path(__file__).with_name("jmx-exporter-pom.xml")  # the Prometheus JMX exporter's java agent
EXPORTER_CONFIG = Path(__file__).with_name("jmx-exporter.yaml")  # the broker metrics it exports
MIN_JAVA = 17  # Kafka 4.x brokers require Java 17
VERSION_ENV = "KPERF_KAFKA_VERSION"
# kperf runs KRaft-only brokers formatted with SCRAM users (3.5+), drives the Java
# ConsumerPerformance and EndToEndLatency of org.apache.kafka.tools (3.5+), and
# 3.7 is the oldest release line Kafka still supported when 4.0 came out.
OLDEST_RELEASE = (3, 7)
_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)(?P<build>-[\w.]+)?")  # 4.3.1, or a source build's 4.4.0-SNAPSHOT

# tool -> (script under KAFKA_HOME/bin, main class on the Maven classpath)
TOOLS: dict[str, tuple[str, str]] = {
    "server": ("kafka-server-start.sh", "kafka.Kafka"),
    "storage": ("kafka-storage.sh", "kafka.tools.StorageTool"),
    "producer-perf": ("kafka-producer-perf-test.sh", "org.apache.kafka.tools.ProducerPerformance"),
    "consumer-perf": ("kafka-consumer-perf-test.sh", "org.apache.kafka.tools.ConsumerPerformance"),
    "e2e-latency": ("kafka-e2e-latency.sh", "org.apache.kafka.tools.EndToEndLatency"),
    "share-consumer-perf": ("kafka-share-consumer-perf-test.sh", "org.apache.kafka.tools.ShareConsumerPerformance"),
    "features": ("kafka-features.sh", "org.apache.kafka.tools.FeatureCommand"),
    "metadata-quorum": ("kafka-metadata-quorum.sh", "org.apache.kafka.tools.MetadataQuorumCommand"),
    # The share groups a cluster holds: confluent-kafka's admin client lists consumer groups only (2.16.1).
    "share-groups": ("kafka-share-groups.sh", "org.apache.kafka.tools.consumer.group.ShareGroupCommand"),
}
# Tools that run for a moment and measure nothing (formatting a node, an admin request): compiled by C1 alone, so their
# second of work is not spent on C2 compiles it never repays (StorageTool random-uuid: 1.7 CPU-s, 1.0 with C1 alone,
# 2026-12-02, this 2-core host). The brokers and the perf tools, which measure, keep the JVM's own tiers.
SHORT_TOOLS = frozenset({"storage", "features", "metadata-quorum", "share-groups"})
C1_ONLY = "-XX:TieredStopAtLevel=1"

# The JVM settings kafka-run-class.sh uses, so a Maven-launched broker behaves
# like one started by the official scripts.
JVM_PERFORMANCE_OPTS = [
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
]

LOG4J2_CONFIG = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
"""
# Kafka 3.x logs through log4j 1 (reload4j), which reads its own file format.
LOG4J1_CONFIG = """\
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${kafka.logs.dir}/server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
"""


def pinned_version() -> str:
    """The Kafka version kperf-pom.xml pins (the single place it is set)."""
    return _pom_property(POM, "kafka.version")


def exporter_version() -> str:
    """The JMX exporter agent's version jmx-exporter-pom.xml pins (the single place it is set)."""
    return _pom_property(EXPORTER_POM, "jmx-exporter.version")


def _pom_property(pom: Path, name: str) -> str:
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    value = ET.parse(pom).getroot().find(f"m:properties/m:{name}", ns)
    assert value is not None and value.text, f"{pom} has no {name}"
    return value.text.strip()


def selected_version() -> str:
    """The Kafka release kperf runs: ``$KPERF_KAFKA_VERSION`` when set, else the pinned one (both checked)."""
    return check_version(os.environ.get(VERSION_ENV) or pinned_version())


def _release(version: str) -> tuple[tuple[int, int, int], bool] | None:
    """A version's (major, minor, patch) and whether it is a release (no build suffix such as -SNAPSHOT);
    None when it is no version number at all."""
    match = _RELEASE.fullmatch(version)
    if match is None:
        return None
    return (int(match[1]), int(match[2]), int(match[3])), match["build"] is None


def check_version(version: str) -> str:
    """``version`` when it names a release kperf can run, else a one-line error saying why."""
    parsed = _release(version.strip())
    if parsed is None:
        raise KperfError(f"Kafka version {version!r} is not a release number such as {pinned_version()}")
    if parsed[0][:2] < OLDEST_RELEASE:
        raise KperfError(
            f"Kafka {version} is too old: kperf runs KRaft brokers and the stock tools of "
            f"{'.'.join(map(str, OLDEST_RELEASE))} or newer"
        )
    return version.strip()


def release_key(version: str) -> tuple[int, ...]:
    """A checked version as numbers, to order releases (4.1.1 < 4.3.1)."""
    parsed = _release(check_version(version))
    assert parsed is not None
    return parsed[0]


def current_version() -> str:
    """The release kperf runs now: KAFKA_HOME's when it is set (read from its jars, nothing fetched), else
    :func:`selected_version`. Setting both to different releases is an error."""
    home = os.environ.get("KAFKA_HOME")
    if not home:
        return selected_version()
    version = kafka_home_version(Path(home).resolve())
    wanted = os.environ.get(VERSION_ENV)
    if wanted and wanted != version:
        raise KperfError(f"KAFKA_HOME holds Kafka {version} but {VERSION_ENV} (--kafka-version) asks for {wanted}: "
                         "unset one of them")
    return version


def java_executable() -> str:
    """The java to run Kafka with (JAVA_HOME first, like Kafka's scripts), checked for version."""
    java_home = os.environ.get("JAVA_HOME") or None
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise KperfError(
            f"Java not found: Kafka needs Java {MIN_JAVA} or newer "
            "(install OpenJDK, e.g. apt-get install openjdk-17-jre-headless, or set JAVA_HOME)"
        )
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False).stderr
    major = parse_java_major(out)
    if major is None:
        raise KperfError(f"could not read the Java version from '{java} -version': {out.strip()[:200]}")
    if major < MIN_JAVA:
        raise KperfError(f"Java {major} at {java} is too old: Kafka 4.x needs Java {MIN_JAVA} or newer")
    return java


def parse_java_major(version_output: str) -> int | None:
    """Major version from ``java -version`` output ('1.8.0_392' -> 8, '17.0.15' -> 17)."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


@dataclass(frozen=True)
class KafkaDistribution:
    """A usable Kafka: either an official distribution or Maven-fetched jars."""

    version: str
    java: str
    home: Path | None = None  # KAFKA_HOME: launch through its bin scripts
    libs: Path | None = None  # Maven jars: launch the main classes directly
    source: str = field(default="maven")

    def command(
        self,
        tool: str,
        args: list[str],
        *,
        heap: str | None = None,
        log_dir: Path | None = None,
        jvm_options: list[str] | None = None,
    ) -> tuple[list[str], dict[str, str]]:
        """The argv and environment that run ``tool`` (a key of TOOLS) with ``args``.

        ``heap`` sets -Xms/-Xmx; ``log_dir`` sends the tool's log4j output to
        ``log_dir/server.log`` instead of the console; ``jvm_options`` (e.g. a
        ``-javaagent``) go to the JVM, through KAFKA_OPTS for KAFKA_HOME's scripts,
        after C1_ONLY for the SHORT_TOOLS.
        """
        script, main_class = TOOLS[tool]
        jvm_options = [*([C1_ONLY] if tool in SHORT_TOOLS else []), *(jvm_options or [])]
        env = dict(os.environ)
        log4j_opts: list[str] = []
        if log_dir is not None:
            config, config1 = log_dir / "log4j2.properties", log_dir / "log4j.properties"
            config.write_text(LOG4J2_CONFIG)
            config1.write_text(LOG4J1_CONFIG)
            log4j_opts = [f"-Dlog4j2.configurationFile={config}", f"-Dlog4j.configuration=file:{config1}",
                          f"-Dkafka.logs.dir={log_dir}"]
        heap_opts = [f"-Xms{heap}", f"-Xmx{heap}"] if heap else []
        if self.home is not None:
            if heap_opts:
                env["KAFKA_HEAP_OPTS"] = " ".join(heap_opts)
            if log_dir is not None:
                env["LOG_DIR"] = str(log_dir)
                env["KAFKA_LOG4J_OPTS"] = " ".join(log4j_opts)
            if jvm_options:
                env["KAFKA_OPTS"] = " ".join([*env.get("KAFKA_OPTS", "").split(), *jvm_options])
            return [str(self.home / "bin" / script), *args], env
        assert self.libs is not None
        argv = [self.java, *heap_opts, *JVM_PERFORMANCE_OPTS, *log4j_opts, *jvm_options]
        return [*argv, "-cp", f"{self.libs}/*", main_class, *args], env

    def describe(self) -> str:
        """One line for logs and reports: which Kafka and where it comes from."""
        where = self.home if self.home is not None else self.libs
        return f"Apache Kafka {self.version} ({self.source}: {where})"


def kafka_home_version(home: Path) -> str:
    """The release of the distribution at ``home``, read from its clients jar."""
    if not (home / "bin" / TOOLS["server"][0]).is_file():
        raise KperfError(f"KAFKA_HOME={home} is not a Kafka distribution (no bin/{TOOLS['server'][0]})")
    jars = sorted((home / "libs").glob("kafka-clients-*.jar"))
    match = re.match(r"kafka-clients-(.+)\.jar$", jars[0].name) if jars else None
    if match is None:
        raise KperfError(f"KAFKA_HOME={home} has no libs/kafka-clients-*.jar to tell its version")
    version = match.group(1)
    try:
        return check_version(version)
    except KperfError as exc:
        raise KperfError(f"KAFKA_HOME={home}: {exc}") from None


def fetch_with_maven(version: str, java: str) -> KafkaDistribution:
    """The release's jars, copied by Maven into the cache on first use."""
    libs = cache_dir() / f"kafka-{version}" / "libs"
    if (libs / f"kafka-clients-{version}.jar").is_file():
        return KafkaDistribution(version=version, java=java, libs=libs)
    mvn = maven("Kafka", "or set KAFKA_HOME to an unpacked Kafka distribution")
    with _cache_folder(f"kafka-{version}") as tmp:
        result = _copy_dependencies(mvn, POM, tmp / "libs", f"-Dkafka.version={version}")
        if result.returncode != 0:
            released = released_versions(mvn)
            if released and version not in released:  # Maven's own wording varies (e.g. a cached miss)
                raise KperfError(f"Kafka {version} is not on Maven Central; releases kperf can run: {', '.join(released)}")
            raise KperfError(f"could not fetch Kafka {version} with Maven: {_maven_error(result)}")
        libs.parent.mkdir(exist_ok=True)
        os.replace(tmp / "libs", libs)
    return KafkaDistribution(version=version, java=java, libs=libs)


def ensure_jmx_exporter() -> Path:
    """The Prometheus JMX exporter's java agent jar (pinned in jmx-exporter-pom.xml), copied by Maven into the
    cache on first use. It stays apart from the Kafka jars: an agent, not a library on the broker's classpath."""
    version = exporter_version()
    folder = cache_dir() / f"jmx-exporter-{version}"
    jar = folder / f"jmx_prometheus_javaagent-{version}.jar"
    if jar.is_file():
        return jar
    mvn = maven("the Prometheus JMX exporter (for the brokers' own metrics)")
    with _cache_folder(folder.name) as tmp:
        result = _copy_dependencies(mvn, EXPORTER_POM, tmp / "jars")
        if result.returncode != 0:
            raise KperfError(f"could not fetch the JMX exporter {version} with Maven: {_maven_error(result)}")
        os.replace(tmp / "jars", folder)
    return jar


def exporter_agent_option(agent: Path, host: str, port: int) -> str:
    """The JVM option that attaches the JMX exporter ``agent`` to a broker, serving the metrics kperf's config
    names on http://``host``:``port``/metrics."""
    return f"-javaagent:{agent}={host}:{port}:{EXPORTER_CONFIG}"


def maven(what: str, alternative: str = "") -> str:
    """The mvn executable, or a one-line error saying what kperf needed it for."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KperfError(f"Maven not found: kperf fetches {what} with Maven (install it, e.g. apt-get install maven)"
                         + (f", {alternative}" if alternative else ""))
    return mvn


@contextlib.contextmanager
def _cache_folder(name: str) -> Iterator[Path]:
    """A temporary folder in the cache to fetch into, then rename: an interrupted or failed fetch leaves nothing."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir(), prefix=f".fetch-{name}-") as tmp:
        yield Path(tmp)


def _copy_dependencies(mvn: str, pom: Path, output: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [mvn, "-B", "-q", "-f", str(pom), "dependency:copy-dependencies", *options, f"-DoutputDirectory={output}"],
        capture_output=True, text=True, check=False,
    )


def _maven_error(result: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in (result.stdout + result.stderr).splitlines() if "ERROR" in ln] or ["(no output)"]
    return lines[0].strip()[:300]


def released_versions(mvn: str) -> list[str]:
    """The releases of the stock tools Maven's repository lists, from the oldest kperf runs.

    Asking Maven for the RELEASE of kafka-tools' pom makes it download the
    artifact's version list (maven-metadata) into the local repository, through
    the user's own Maven settings and mirrors."""
    try:
        subprocess.run([mvn, "-B", "-q", "dependency:get", "-Dartifact=org.apache.kafka:kafka-tools:RELEASE:pom",
                        "-Dtransitive=false"], capture_output=True, check=False, timeout=120)
    except subprocess.TimeoutExpired:
        return []  # the caller then reports Maven's own error
    repository = Path.home() / ".m2" / "repository"  # Maven's default local repository
    found: set[tuple[int, ...]] = set()
    for metadata in (repository / "org" / "apache" / "kafka" / "kafka-tools").glob("maven-metadata-*.xml"):
        try:
            versions = [element.text or "" for element in ET.parse(metadata).getroot().iter("version")]
        except ET.ParseError:
            continue
        for version in versions:
            parsed = _release(version)
            if parsed is not None and parsed[1] and parsed[0][:2] >= OLDEST_RELEASE:  # releases only
                found.add(parsed[0])
    return [".".join(map(str, v)) for v in sorted(found)]


def ensure_kafka() -> KafkaDistribution:
    """The Kafka to run: KAFKA_HOME when set, else the selected release (fetched once)."""
    java = java_executable()
    home = os.environ.get("KAFKA_HOME")
    if home:
        return KafkaDistribution(version=current_version(), java=java, home=Path(home).resolve(), source="KAFKA_HOME")
    return fetch_with_maven(selected_version(), java)
