/* kperf's native hot loops (kperf.drivers.native): what its C files share, and the library's API.
 *
 * Python calls the exported kp_ functions below (kperf/drivers/native/library.py's API declares them for ctypes), each
 * handle from one thread; the loops serve librdkafka's delivery reports and rebalances on that same thread
 * (rd_kafka_poll, rd_kafka_consumer_poll), so nothing here needs a lock. Every wait is bounded by a timeout the
 * caller passes. */
#ifndef KPERF_LOOPS_H
#define KPERF_LOOPS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <rdkafka.h>

/* ---- the wall clock, as Python's time.time() reads and rounds it ---- */

/* CLOCK_REALTIME in seconds, converted as CPython converts its nanoseconds (_PyTime_AsSecondsDouble), so that a
 * latency the C computes is the float the Python loop would have computed from the same clock readings. */
static inline double kp_wall(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        return ns % 1000000000 == 0 ? (double)(ns / 1000000000) : (double)ns / 1e9;
}

/* Every record's identity: the header kperf.drivers.payloads puts on it (producer id, sequence, intended send time
 * in ns since the epoch: big-endian u32, u64, u64). */
#define KP_HEADER "kperf"
#define KP_IDENTITY_SIZE 20

/* A timeout in seconds as librdkafka's milliseconds, truncated as confluent-kafka converts it (so a wait under
 * a millisecond is a poll that does not block); never negative (never "forever"), at most a day. */
static inline int kp_ms(double seconds) {
        return seconds <= 0 ? 0 : seconds >= 86400.0 ? 86400000 : (int)(seconds * 1000);
}

/* ---- what a loop failed on, and the errors it counted: the first members of both loops' handles ---- */

#define KP_FAILURE_MESSAGE 512

/* librdkafka's error codes run from RD_KAFKA_RESP_ERR__BEGIN (-200) to the broker's codes (below 200): counted in a
 * table indexed by code, so counting one costs no search. */
#define KP_ERR_LOWEST (-256)
#define KP_ERR_CODES 512

typedef struct kp_common {
        char message[KP_FAILURE_MESSAGE]; /* what failed, one line; "" while nothing did */
        const char *cause;                /* few stable words (MeasurementFailed's cause); NULL while nothing failed */
        uint64_t errors[KP_ERR_CODES];    /* failed deliveries or read errors by code - KP_ERR_LOWEST */
        uint64_t failed;                  /* their sum */
} kp_common;

/* The loops' own (not exported to Python): */
void kp_fail(kp_common *common, const char *cause, const char *format, ...)
        __attribute__((format(printf, 3, 4)));
void kp_count_error(kp_common *common, rd_kafka_resp_err_t err);
void kp_discard_log(const rd_kafka_t *rk, int level, const char *facility, const char *line);
/* Python: a handle of either loop, read through its kp_common. */
const char *kp_failure_message(const void *handle);
const char *kp_failure_cause(const void *handle);
size_t kp_errors(const void *handle, int32_t *codes, uint64_t *counts, size_t max);
int kp_header_version(void);

/* ---- latency recorder (recorder.c) ---- */

typedef struct kp_recorder kp_recorder;

#define KP_RECORDER_VALUES 60006 /* distinct rounded values at most (recorder.c) */
#define KP_RECORDER_BINS 35846   /* bins of every finite latency: log(DBL_MAX) / log(1.02) < 35,845 */
size_t kp_recorder_limits(int bins);

kp_recorder *kp_recorder_new(int windowed);
void kp_recorder_free(kp_recorder *recorder);
void kp_recorder_add(kp_recorder *recorder, double seconds);
size_t kp_recorder_values(const kp_recorder *recorder, int64_t *values, uint64_t *counts, size_t max);
size_t kp_recorder_take_bins(kp_recorder *recorder, int64_t *bins, uint64_t *counts, size_t max);

/* ---- sequence ledger (ledger.c) ---- */

typedef struct kp_ledger kp_ledger;

kp_ledger *kp_ledger_new(void);
void kp_ledger_free(kp_ledger *ledger);
int kp_ledger_add(kp_ledger *ledger, uint32_t producer, uint64_t sequence);
size_t kp_ledger_producers(const kp_ledger *ledger);
const uint8_t *kp_ledger_bits(const kp_ledger *ledger, size_t index, uint32_t *producer, size_t *size);
uint64_t kp_ledger_duplicated(const kp_ledger *ledger);

/* ---- the producer loop (producer.c) ---- */

enum { KP_BOUNDARY = 0, KP_DONE = 1, KP_BEHIND = 2, KP_FULL = 3, KP_FAILED = -1 }; /* why kp_producer_run returned */

typedef struct kp_ack { /* a tracked acknowledgement (kperf.drivers.loop.TurnAcks) */
        uint64_t sequence;
        int64_t partition;
        double acked;    /* wall clock of its delivery report */
        double intended; /* its intended send time (unthrottled: its send time) */
} kp_ack;

typedef struct kp_producer kp_producer;

kp_producer *kp_producer_new(rd_kafka_conf_t *conf, const char *topic, uint32_t id, double rate,
                             double give_up_behind_s, int record_latency, int record_series, int track_acks,
                             char *errstr, size_t errstr_size);
int kp_producer_pool(kp_producer *p, const uint8_t *pool, size_t size, const uint64_t *sizes, size_t n_sizes);
int kp_producer_lines(kp_producer *p, const uint8_t *data, const uint64_t *ends, size_t n, const uint32_t *order,
                      size_t n_order);
int kp_producer_keys(kp_producer *p, const uint8_t *data, const uint64_t *ends, size_t n, const uint32_t *order,
                     size_t n_order);
int kp_producer_warm_up(kp_producer *p, uint64_t records, double until);
uint64_t kp_producer_warmed(const kp_producer *p);
int kp_producer_flush(kp_producer *p, double timeout_s);
int kp_producer_start(kp_producer *p, double started);
int kp_producer_transactions(kp_producer *p, uint64_t records, double ms, double abort, double timeout_s);
void kp_producer_transactions_tally(const kp_producer *p, uint64_t counts[3], double *commit_s);
int kp_producer_run(kp_producer *p, double until, double deadline, double total);
uint64_t kp_producer_sent(const kp_producer *p);
void kp_producer_counts(const kp_producer *p, uint64_t counts[3]);
kp_recorder *kp_producer_recorder(kp_producer *p, int intended);
size_t kp_producer_acks(const kp_producer *p, const kp_ack **acks);
void kp_producer_close(kp_producer *p);
void kp_producer_free(kp_producer *p);

/* ---- the consumer loop (consumer.c) ---- */

typedef struct kp_consumed { /* what ConsumerLoop's attributes say; NAN: not yet (Python's None) */
        uint64_t records, bytes, fetches;
        double joined, assigned, first, last, live;
} kp_consumed;

typedef struct kp_consumer kp_consumer;

kp_consumer *kp_consumer_new(rd_kafka_conf_t *conf, const char *topic, int end_to_end, size_t batch, double poll_s,
                             char *errstr, size_t errstr_size);
int kp_consumer_subscribe(kp_consumer *c);
int kp_consumer_read(kp_consumer *c, double until, double stop_at);
const kp_consumed *kp_consumer_consumed(const kp_consumer *c);
kp_ledger *kp_consumer_ledger(kp_consumer *c);
kp_recorder *kp_consumer_recorder(kp_consumer *c);
int kp_consumer_close(kp_consumer *c);
void kp_consumer_free(kp_consumer *c);

#endif
