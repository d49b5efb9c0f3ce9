"""What a Kafka-API cluster says it can do, and the one check that refuses what it cannot before any load.

A cluster that speaks Kafka's protocol need not be Apache Kafka (Redpanda, WarpStream, kfake, ...): it may answer
fewer APIs, older versions of them, or no feature levels at all. Its ApiVersions answer says which, and it is
asked directly (one request on one connection, a few milliseconds): the API version ranges it answers by key,
and (ApiVersions v3+) its finalized feature levels such as ``metadata.version``. Brokers answer ApiVersions
before authenticating (SASL clients ask it first), so only the TLS of kperf's security settings is needed.

``require(bootstrap, needs)`` is the check every command and experiment makes before load: a need is an API key
at a least version, and where it matters a finalized feature at a least level (``Need``), named in words; later
work (share groups, transactions, KIP-848 consumer groups) adds its needs here and calls the same check.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kperf.errors import KperfError
from kperf.kafka import security
from kperf.kafka.security import Security

TIMEOUT_S = 10.0
API_VERSIONS = 18
UNSUPPORTED_VERSION = 35  # the error a broker answers an ApiVersions version it lacks with (in the v0 format)
# v3 is the first with feature levels (KIP-584); v4 (KIP-1022) the first whose answer lists the features a broker
# supports from level 0 (transaction.version, group.version, ...), which kperf needs to know a level can be set.
ASKED_VERSION = 4
CLIENT = b"kperf"


@dataclass(frozen=True)
class Need:
    """Something kperf needs the cluster to answer: API ``key`` at version ``version`` or newer and, when
    ``feature`` is given, that feature finalized at ``level`` or higher (Kafka answers some APIs, such as share
    groups', only once their feature is enabled); ``what`` in words."""

    what: str
    key: int
    version: int = 0
    feature: str | None = None
    level: int = 1


# The APIs kperf's own clients use, by key (their names as Kafka's protocol guide gives them).
NAMES = {
    0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
    10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
    18: "ApiVersions", 19: "CreateTopics", 20: "DeleteTopics", 21: "DeleteRecords", 22: "InitProducerId",
    24: "AddPartitionsToTxn",
    25: "AddOffsetsToTxn", 26: "EndTxn", 28: "TxnOffsetCommit",
    15: "DescribeGroups", 32: "DescribeConfigs", 68: "ConsumerGroupHeartbeat", 76: "ShareGroupHeartbeat",
    78: "ShareFetch", 79: "ShareAcknowledge", 42: "DeleteGroups", 44: "IncrementalAlterConfigs",
}


def api(key: int, version: int = 0) -> Need:
    """The need for API ``key`` (at ``version`` or newer), named by the protocol's name for it."""
    return Need(NAMES.get(key, f"API {key}"), key, version)


# Every measurement: topics made and removed around it, records written and read by a classic consumer group.
TOPICS = (api(19), api(20), api(3))
PRODUCE = (api(0),)
CONSUME = (api(1), api(2), api(10), api(11), api(12), api(13), api(14), api(9))
# A measured point's or capacity trial's topics are primed, their records then deleted (kperf.kafka.topics.temporary, primed).
PRIMED = (api(21),)
# A capacity trial's producers start once its groups formed, as DescribeGroups tells (kperf.kafka.groups).
GROUPS_DESCRIBED = (api(15),)
# Idempotent producers (enable.idempotence; the Java client's default) ask for a producer id.
IDEMPOTENCE = api(22)
# KIP-848's consumer group protocol: its heartbeat, answered once group.version is finalized at 1 (Kafka 4.0's default).
CONSUMER_PROTOCOL = Need("the consumer group protocol (KIP-848)", 68, 0, feature="group.version")
# A transactional producer: its transaction coordinator found, partitions added, the transaction ended.
TRANSACTIONS = (api(10), api(22), api(24), api(26))
# ... and a read-process-write processor's: the consumed offsets added to its transactions and committed in them.
OFFSETS_IN_TRANSACTIONS = (api(25), api(28))
# A share group (KIP-932): its settings set on it and it deleted after (kperf.kafka.share_groups), its heartbeat
# (answered only with share.version finalized at 1: Kafka 4.2's default and later), its fetch and acknowledge.
SHARE_GROUPS = (api(44), api(42), Need("share groups", 76, 0, feature="share.version"), api(78), api(79))
# A codec is a record-batch format the broker must store: zstd came with Produce v7 (KIP-110); the others with v0.
CODECS = {"zstd": Need("zstd compression", 0, 7)}


@dataclass(frozen=True)
class Features:
    """A cluster's ApiVersions answer: the version range of every API key it answers, and its finalized
    feature levels (empty when it reports none: older Kafka, many Kafka-API systems)."""

    apis: Mapping[int, tuple[int, int]]
    finalized: Mapping[str, int] = field(default_factory=dict)
    supported: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # the levels each feature may be set to

    def unsettable(self, feature: str, level: int) -> str | None:
        """Why ``feature`` cannot be finalized at ``level`` here, in words (None: it can)."""
        if feature not in self.supported:
            return f"does not report {feature}, so it cannot be set to {level}"
        low, high = self.supported[feature]
        if not min(low, 0) <= level <= high:  # a feature may also be disabled (0)
            return f"supports {feature} at levels {min(low, 0)}-{high}, not {level}"
        return None

    def missing(self, need: Need) -> str | None:
        """Why ``need`` is not met, in words (None: it is)."""
        answered = self.apis.get(need.key)
        label = f"{need.what} (API key {need.key})" if need.what == NAMES.get(need.key) else need.what
        if answered is None:
            return f"does not answer {label}"
        if answered[1] < need.version:
            return (f"answers {NAMES.get(need.key, f'API {need.key}')} only up to v{answered[1]}, "
                    f"and {need.what} needs v{need.version}")
        if need.feature is not None and self.finalized.get(need.feature, 0) < need.level:
            return (f"has {need.feature} at level {self.finalized.get(need.feature, 0)}, and {need.what} needs "
                    f"level {need.level} (kafka-features.sh upgrade --feature {need.feature}={need.level})")
        return None

    def describe(self) -> dict[str, str]:
        """What a record carries (env.* columns): ranges as ``key:min-max`` by key, feature levels as JSON."""
        ranges = ",".join(f"{key}:{low}-{high}" for key, (low, high) in sorted(self.apis.items()))
        return {"api_versions": ranges, "features": json.dumps(dict(sorted(self.finalized.items())))}


_ASKED: dict[tuple[str, Security], Features] = {}


def of(bootstrap: str, secured: Security | None = None, timeout: float = TIMEOUT_S) -> Features:
    """The ApiVersions answer of the first of ``bootstrap``'s brokers that answers, asked once per process
    (the answer changes only with an upgrade, which no run spans)."""
    connection = secured or security.current()
    key = (bootstrap, connection)
    if key not in _ASKED:
        _ASKED[key] = ask(bootstrap, connection, timeout)
    return _ASKED[key]


def require_settable(bootstrap: str, levels: Mapping[str, int], secured: Security | None = None) -> None:
    """Refuse, in one line, a feature level the cluster cannot be set to (a point that measures one sets it)."""
    answered = of(bootstrap, secured)
    for feature, level in levels.items():
        why = answered.unsettable(feature, level)
        if why is not None:
            raise KperfError(f"the cluster at {bootstrap} {why}")


def require(bootstrap: str, needs: Iterable[Need], secured: Security | None = None) -> None:
    """Refuse, in one line naming the first missing need, a cluster that lacks one of ``needs``."""
    answered = of(bootstrap, secured)
    for need in needs:
        why = answered.missing(need)
        if why is not None:
            raise KperfError(f"the cluster at {bootstrap} {why}")


def for_producer(config: Mapping[str, object], java: bool = False, transactional: bool = False) -> list[Need]:
    """What a producer with ``config`` (librdkafka's or the Java client's names) needs: to write, its codec
    stored, and a producer id when it is idempotent: when asked, or by the Java client's default (with acks=all,
    its default too; librdkafka's default is not idempotent); a ``transactional`` one, transactions."""
    needs = [*TOPICS, *PRODUCE, *(TRANSACTIONS if transactional else ())]
    codec = str(config.get("compression.type", config.get("compression.codec", "none"))).lower()
    if codec in CODECS:
        needs.append(CODECS[codec])
    idempotence = str(config.get("enable.idempotence", "")).lower()
    java_default = java and idempotence == "" and str(config.get("acks", "all")).lower() in ("all", "-1")
    if idempotence == "true" or java_default:
        needs.append(IDEMPOTENCE)
    return needs


def for_consumer(config: Mapping[str, object], share: bool = False) -> list[Need]:
    """What a consumer with ``config`` needs: to read in a group, a classic one unless it asks for KIP-848's, or
    (``share``) in a share group."""
    if share:
        return [*TOPICS, api(10), *SHARE_GROUPS]
    if str(config.get("group.protocol", "classic")).lower() == "consumer":
        return [*TOPICS, api(1), api(2), api(10), CONSUMER_PROTOCOL, api(9)]
    return [*TOPICS, *CONSUME]


def ask(bootstrap: str, secured: Security, timeout: float = TIMEOUT_S) -> Features:
    """Send ApiVersions to each of ``bootstrap``'s brokers in turn until one answers."""
    failures = []
    for address in bootstrap.split(","):
        host, _, port = address.strip().rpartition(":")
        try:
            with _connect(host, int(port), secured, timeout) as conn:
                answered = _exchange(conn, ASKED_VERSION)
                # A broker without v4 answers UNSUPPORTED_VERSION with the range of ApiVersions alone: asked again
                # at its newest (v3: feature levels, not every supported one; v0-v2: none).
                older = answered.apis.get(API_VERSIONS, (0, 0))[1]
                return answered if answered.apis.keys() != {API_VERSIONS} else _exchange(conn, min(older, ASKED_VERSION - 1))
        except (OSError, ValueError, IndexError, struct.error) as exc:  # IndexError: an answer cut short
            failures.append(f"{address}: {exc}")
    raise KperfError(f"no broker at {bootstrap} answered ApiVersions within {timeout:.0f} s ({'; '.join(failures)})")


def _connect(host: str, port: int, secured: Security, timeout: float) -> socket.socket:
    conn = socket.create_connection((host, port), timeout=timeout)
    if not secured.protocol.endswith("SSL"):
        return conn
    context = ssl.create_default_context(cafile=str(secured.ca_location) if secured.ca_location else None)
    context.check_hostname = secured.verify_hostname
    if secured.certificate_location is not None and secured.key_location is not None:
        context.load_cert_chain(secured.certificate_location, secured.key_location, secured.key_password)
    return context.wrap_socket(conn, server_hostname=host)


def _exchange(conn: socket.socket, version: int) -> Features:
    """One ApiVersions request at ``version`` and its answer. v3 is flexible (compact arrays, tagged fields: the
    feature levels are tag 2); v0-v2, and any version's UNSUPPORTED_VERSION answer, are not."""
    flexible = version >= 3
    header = struct.pack(">hhih", API_VERSIONS, version, 1, len(CLIENT)) + CLIENT
    # v3's body: the client's software name and version as compact strings; the request header's and body's tags.
    software = bytes([len(CLIENT) + 1]) + CLIENT
    request = header + b"\0" + software + software + b"\0" if flexible else header
    conn.sendall(struct.pack(">i", len(request)) + request)
    (size,) = struct.unpack(">i", _read(conn, 4))
    body = _Reader(_read(conn, size))
    body.int32()  # correlation id (ApiVersions answers always use header v0)
    error = body.int16()
    if error not in (0, UNSUPPORTED_VERSION):
        raise ValueError(f"ApiVersions v{version} answered error {error}")
    flexible = flexible and error == 0
    apis = {}
    for _ in range(body.uvarint() - 1 if flexible else body.int32()):
        key, low, high = body.struct(">hhh")
        if flexible:
            body.skip_tags()
        apis[key] = (low, high)
    if not flexible:
        return Features(apis)
    body.int32()  # throttle time
    finalized: dict[str, int] = {}
    supported: dict[str, tuple[int, int]] = {}
    for _ in range(body.uvarint()):
        tag, size = body.uvarint(), body.uvarint()
        if tag not in (0, 2):  # 0: SupportedFeatures (min and max level), 2: FinalizedFeatures; 1 is their epoch
            body.skip(size)
            continue
        for _ in range(body.uvarint() - 1):
            name = body.compact_string()
            (first, second) = body.struct(">hh")  # finalized: its max level, then min; supported: min, then max
            body.skip_tags()
            if tag == 2:
                finalized[name] = first
            else:
                supported[name] = (first, second)
    return Features(apis, finalized, supported)


def _read(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ValueError("the connection closed before the answer was complete")
        data += chunk
    return data


class _Reader:
    """Kafka's wire types read in order from one answer."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def struct(self, fmt: str) -> tuple[int, ...]:
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return values

    def int16(self) -> int:
        return self.struct(">h")[0]

    def int32(self) -> int:
        return self.struct(">i")[0]

    def uvarint(self) -> int:
        value = shift = 0
        while True:
            byte = self.data[self.at]
            self.at += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7

    def skip(self, size: int) -> None:
        self.at += size

    def compact_string(self) -> str:
        size = self.uvarint() - 1
        self.at += size
        return self.data[self.at - size:self.at].decode()

    def skip_tags(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self.skip(self.uvarint())
