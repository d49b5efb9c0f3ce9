/* The native producer loop: kperf.drivers.producer_loop.PythonProducerLoop's send / pace / acknowledge loop over
 * librdkafka's C API, record for record (NativeProducerLoop drives it).
 *
 * Each record carries the "kperf" identity header (producer id, sequence, intended send time in ns: big-endian
 * u32, u64, u64) and its sequence as the message opaque, so a delivery report finds its record without memory that
 * grows with the run: a paced record's intended time is recomputed from its sequence; only tracked acknowledgements
 * of an unthrottled run need each record's send time kept.
 *
 * Recording latency adds no clock read per record: a record's send-to-ack latency is its acknowledgement time less
 * its send time, the loop's own clock reading when it queued the record, kept in a ring by sequence (the Python
 * loop's msg.latency() is librdkafka's, from the same enqueue, and reads the clock per record); and every report one
 * rd_kafka_poll serves had arrived before its first callback ran (rd_kafka_q_serve takes the queue's ops at once,
 * after at most one wait), so that callback's clock reading is each one's acknowledgement time: at or after it
 * arrived, at or before its own callback.
 *
 * Waiting for a paced record's turn sleeps (see wait_turn): a paced loop's CPU follows its rate, so the brokers it
 * shares a host with are not starved by a loop that has nothing to send. */
#define _GNU_SOURCE /* pipe2, ppoll */
#include <fcntl.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "loops.h"

#define POLL_EVERY 1000      /* unthrottled: delivery reports served every N sends */
#define QUEUE_FULL_POLL_MS 5 /* the local queue is full: serve reports this long, then try again */
#define SEND_FULL 1           /* send_record: the local queue was still full at its until */
#define SENT_RING (1u << 17)  /* send times kept: more records outstanding (queue.buffering.max.messages above it) fall
                               * back to librdkafka's own latency, one clock read each */

/* A record's send time, by sequence + 1 (0: none yet). */
typedef struct sent_stamp {
        uint64_t sequence;
        double at;
} sent_stamp;

/* An endless, repeating schedule of byte strings: a payload file's lines, or record keys. */
typedef struct turns {
        uint8_t *data;   /* the distinct values, joined */
        uint64_t *ends;  /* value i is data[ends[i - 1]:ends[i]] (value 0 from 0) */
        uint32_t *order; /* which value each turn takes */
        size_t turns, turn;
} turns;

struct kp_producer {
        kp_common common; /* first: Python reads failures and errors through it */
        rd_kafka_t *rk;
        rd_kafka_topic_t *rkt;
        char *topic;
        uint32_t id;
        double rate; /* records/s of this producer; <= 0: unthrottled */
        double give_up_behind_s;
        int record_latency, track_acks;
        int counting;       /* between start() and close(): reports of measured records are counted */
        double started;     /* a paced record i is meant for started + i / rate */
        uint64_t warmup;    /* warm-up records sent (sequences 0 to warmup - 1) */
        uint64_t sequence;  /* of the next record */
        uint64_t sent;      /* measured records sent */
        uint64_t acked, bytes;
        kp_recorder *ack_latency, *intended_latency; /* the series' one keeps its windows */
        /* payloads: cut from a pool, sizes in turn, each starting where the last ended ... */
        uint8_t *pool;
        size_t pool_size;
        uint64_t *sizes;
        size_t n_sizes, size_turn, offset;
        turns lines; /* ... or a payload file's lines */
        turns keys;  /* no turns: no key */
        double *send_times; /* tracked acknowledgements of an unthrottled run: send time by sequence */
        size_t send_times_capacity;
        kp_ack *acks;
        size_t n_acks, acks_capacity;
        sent_stamp *sent_at; /* latency recorded: send times, in a ring of SENT_RING by sequence */
        int one_poll;        /* reports are served by one rd_kafka_poll of serve(): acked_at may be kept ... */
        double acked_at;     /* ... for all it serves once its first callback read the clock (0: not yet) */
        int holding;         /* a send found the queue full at its until: its payload and key wait for the next */
        int wake[2];         /* a pipe librdkafka writes to when a report reaches its empty main queue (-1: none) */
        const uint8_t *held_value, *held_key;
        size_t held_size, held_key_size;
        /* transactional (kperf.drivers.transactions' rule): each ends after txn_records records or txn_ms ms */
        int transacting, txn_open;   /* kp_producer_transactions was called; a measured transaction began */
        int warm_txn;                /* the warm-up's transaction: 0 not begun, 1 open, 2 committed */
        uint64_t txn_records;        /* 0: by time */
        double txn_ms, txn_abort;    /* the aborted share: kperf.load.Transactions.aborted */
        int txn_timeout_ms;
        uint64_t txn_index, txn_first, txn_acked; /* the open one's index, first record (of those sent), acked before */
        double txn_began;
        uint64_t commits, aborts, aborted_records;
        double commit_s;
};

/* Grow *array (of *capacity items of size bytes) to hold index; 0, or -1 without memory. */
static int grow(void **array, size_t *capacity, size_t size, size_t index) {
        if (index < *capacity)
                return 0;
        size_t wanted = *capacity ? 2 * *capacity : 4096;
        while (wanted <= index)
                wanted *= 2;
        void *grown = realloc(*array, wanted * size);
        if (!grown)
                return -1;
        *array = grown;
        *capacity = wanted;
        return 0;
}

/* A measured record's intended send time: paced, recomputed as the Python loop computed it (started + sent / rate);
 * unthrottled, its send time, kept only when acknowledgements are tracked. */
static double intended_of(const kp_producer *p, uint64_t sequence) {
        if (p->rate > 0)
                return p->started + (double)(sequence - p->warmup) / p->rate;
        return p->send_times[sequence];
}

/* The acknowledgement time of a report being served: the clock, read once per serve() (see the top). */
static double acknowledged(kp_producer *p) {
        if (!p->one_poll)
                return kp_wall(); /* rd_kafka_flush polls many times: every report reads its own */
        if (p->acked_at == 0.0)
                p->acked_at = kp_wall();
        return p->acked_at;
}

/* Serve the delivery reports that are queued, or that come within timeout_ms. */
static void serve(kp_producer *p, int timeout_ms) {
        p->one_poll = 1;
        p->acked_at = 0.0;
        rd_kafka_poll(p->rk, timeout_ms);
        p->one_poll = 0;
}

/* Wait up to seconds for a paced record's turn, serving the delivery reports that come meanwhile as they come.
 * rd_kafka_poll's timeout counts whole milliseconds, and a record's turn at over 1,000 records/s is less than one
 * away: polling without waiting then spun a whole core at any rate. So the reports queued are served, and the loop
 * sleeps in ppoll (nanoseconds) on the pipe librdkafka writes to when the next report reaches its empty queue. The
 * pipe is drained before serving, so a report queued after the serve always wakes the sleep. */
static void wait_turn(kp_producer *p, double seconds) {
        if (p->wake[0] < 0) {
                serve(p, kp_ms(fmin(seconds, 0.001)));
                return;
        }
        char drained[64];
        while (read(p->wake[0], drained, sizeof drained) > 0)
                ;
        serve(p, 0);
        struct pollfd report = {.fd = p->wake[0], .events = POLLIN};
        struct timespec wait = {.tv_sec = (time_t)seconds,
                                .tv_nsec = (long)fmin((seconds - floor(seconds)) * 1e9, 999999999.0)}; /* (rounding) */
        ppoll(&report, 1, &wait, NULL);
}

/* A measured record's send-to-ack latency in seconds, acknowledged at now. */
static double send_to_ack(const kp_producer *p, const rd_kafka_message_t *msg, uint64_t sequence, double now) {
        const sent_stamp *sent = &p->sent_at[sequence % SENT_RING];
        if (sent->sequence == sequence + 1)
                return now - sent->at;
        int64_t latency = rd_kafka_message_latency(msg); /* us, -1: unknown (Python: None, then 0.0) */
        return latency == -1 ? 0.0 : (double)latency / 1000000.0;
}

static void delivered(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque) {
        (void)rk;
        kp_producer *p = opaque;
        uint64_t sequence = (uint64_t)(uintptr_t)msg->_private;
        if (!p->counting || sequence < p->warmup) /* warm-up records are never counted */
                return;
        if (msg->err) {
                kp_count_error(&p->common, msg->err);
                return;
        }
        p->acked++;
        p->bytes += msg->len;
        int paced = p->rate > 0;
        double now = p->track_acks || p->record_latency ? acknowledged(p) : 0.0;
        if (p->track_acks) {
                if (grow((void **)&p->acks, &p->acks_capacity, sizeof(*p->acks), p->n_acks)) {
                        kp_fail(&p->common, "out of memory", "no memory for the acknowledgements tracked (%llu)",
                                (unsigned long long)p->n_acks);
                } else {
                        p->acks[p->n_acks++] = (kp_ack){sequence, msg->partition, now, intended_of(p, sequence)};
                }
        }
        if (p->record_latency) {
                kp_recorder_add(p->ack_latency, send_to_ack(p, msg, sequence, now));
                if (paced || p->track_acks) /* (the Python loop knows an unthrottled record's send time only then) */
                        kp_recorder_add(p->intended_latency, now - intended_of(p, sequence));
        }
}

/* A producer with librdkafka settings conf (taken, whatever happens); NULL with errstr set when it cannot be made. */
kp_producer *kp_producer_new(rd_kafka_conf_t *conf, const char *topic, uint32_t id, double rate,
                             double give_up_behind_s, int record_latency, int record_series, int track_acks,
                             char *errstr, size_t errstr_size) {
        kp_producer *p = calloc(1, sizeof(*p));
        if (p)
                p->wake[0] = p->wake[1] = -1; /* (before any kp_producer_free: 0 is a descriptor) */
        int paced = rate > 0;
        if (!p || !(p->topic = strdup(topic)) || !(p->ack_latency = kp_recorder_new(record_series && !paced)) ||
            !(p->intended_latency = kp_recorder_new(record_series && paced)) ||
            (record_latency && !(p->sent_at = calloc(SENT_RING, sizeof(*p->sent_at))))) {
                snprintf(errstr, errstr_size, "no memory for a producer");
                rd_kafka_conf_destroy(conf);
                kp_producer_free(p);
                return NULL;
        }
#ifdef __GLIBC__
        /* One malloc arena for the whole process (a load process is one producer): glibc gives each thread that
         * allocates its own (librdkafka's broker threads, which build the requests), and each keeps its own
         * high-water mark, so a long run's peak memory crept up: 95, 110 and 129 MiB at 1, 3 and 10 million
         * records here, against 95, 104 and 107 with one arena, at the same speed (docs/bench.md). */
        mallopt(M_ARENA_MAX, 1);
#endif
        p->id = id;
        p->rate = rate;
        p->give_up_behind_s = give_up_behind_s;
        p->record_latency = record_latency;
        p->track_acks = track_acks;
        rd_kafka_conf_set_opaque(conf, p);
        rd_kafka_conf_set_dr_msg_cb(conf, delivered);
        rd_kafka_conf_set_log_cb(conf, kp_discard_log);
        if (!(p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, errstr_size))) {
                rd_kafka_conf_destroy(conf);
                kp_producer_free(p);
                return NULL;
        }
        if (!(p->rkt = rd_kafka_topic_new(p->rk, topic, NULL))) {
                snprintf(errstr, errstr_size, "cannot use topic %s: %s", topic, rd_kafka_err2str(rd_kafka_last_error()));
                kp_producer_free(p);
                return NULL;
        }
        if (paced && pipe2(p->wake, O_NONBLOCK | O_CLOEXEC) == 0) { /* without it, wait_turn polls as before */
                rd_kafka_queue_t *reports = rd_kafka_queue_get_main(p->rk);
                rd_kafka_queue_io_event_enable(reports, p->wake[1], "r", 1);
                rd_kafka_queue_destroy(reports);
        }
        return p;
}

void kp_producer_free(kp_producer *p) {
        if (!p)
                return;
        kp_producer_close(p);
        kp_recorder_free(p->ack_latency);
        kp_recorder_free(p->intended_latency);
        free(p->topic);
        free(p->pool);
        free(p->sizes);
        free(p->lines.data), free(p->lines.ends), free(p->lines.order);
        free(p->keys.data), free(p->keys.ends), free(p->keys.order);
        free(p->send_times);
        free(p->acks);
        free(p->sent_at);
        free(p);
}

/* Payloads cut from pool (copied), sizes[i] bytes in turn (Payloads.schedule(): a kind and its sizes); -1 without
 * memory. */
int kp_producer_pool(kp_producer *p, const uint8_t *pool, size_t size, const uint64_t *sizes, size_t n_sizes) {
        if (!(p->pool = malloc(size)) || !(p->sizes = malloc(n_sizes * sizeof(*sizes))))
                return -1;
        memcpy(p->pool, pool, size);
        memcpy(p->sizes, sizes, n_sizes * sizeof(*sizes));
        p->pool_size = size;
        p->n_sizes = n_sizes;
        return 0;
}

static int set_turns(turns *t, const uint8_t *data, const uint64_t *ends, size_t n, const uint32_t *order,
                     size_t n_order) {
        size_t size = n ? ends[n - 1] : 0;
        if (!(t->data = malloc(size ? size : 1)) || !(t->ends = malloc(n * sizeof(*ends))) ||
            !(t->order = malloc(n_order * sizeof(*order))))
                return -1;
        memcpy(t->data, data, size);
        memcpy(t->ends, ends, n * sizeof(*ends));
        memcpy(t->order, order, n_order * sizeof(*order));
        t->turns = n_order;
        return 0;
}

/* A payload file's n lines (joined in data, line i ending at ends[i]), taken as order says in turn; -1 without
 * memory. */
int kp_producer_lines(kp_producer *p, const uint8_t *data, const uint64_t *ends, size_t n, const uint32_t *order,
                      size_t n_order) {
        return set_turns(&p->lines, data, ends, n, order, n_order);
}

/* Record keys, as kp_producer_lines takes lines (Keys.schedule()); without them, records have no key. */
int kp_producer_keys(kp_producer *p, const uint8_t *data, const uint64_t *ends, size_t n, const uint32_t *order,
                     size_t n_order) {
        return set_turns(&p->keys, data, ends, n, order, n_order);
}

static void next_turn(turns *t, const uint8_t **value, size_t *size) {
        uint32_t i = t->order[t->turn];
        uint64_t start = i ? t->ends[i - 1] : 0;
        *value = t->data + start;
        *size = t->ends[i] - start;
        t->turn = t->turn + 1 == t->turns ? 0 : t->turn + 1;
}

/* The next payload, as Payloads.next() gives it. */
static void next_payload(kp_producer *p, const uint8_t **value, size_t *size) {
        if (p->lines.turns) {
                next_turn(&p->lines, value, size);
                return;
        }
        size_t wanted = p->sizes[p->size_turn], start = p->offset;
        p->size_turn = p->size_turn + 1 == p->n_sizes ? 0 : p->size_turn + 1;
        p->offset = (start + wanted) % (p->pool_size - wanted);
        *value = p->pool + start;
        *size = start + wanted <= p->pool_size ? wanted : p->pool_size - start; /* pool[start:start + size] */
}

static void put_be(uint8_t *at, uint64_t value, int bytes) {
        for (int i = bytes - 1; i >= 0; i--, value >>= 8)
                at[i] = (uint8_t)value;
}

/* Send the next record, meant for intended, at sent (unthrottled and warm-up: both its send time): 0 once queued,
 * SEND_FULL when the client's queue was still full at until (the record is not sent: the next call sends it), -1
 * when it cannot be sent. */
static int send_record(kp_producer *p, double intended, double sent, double until) {
        uint8_t identity[KP_IDENTITY_SIZE];
        put_be(identity, p->id, 4);
        put_be(identity + 4, p->sequence, 8);
        put_be(identity + 12, (uint64_t)(intended * 1e9), 8); /* Python: int(intended * 1e9) */
        const uint8_t *value, *key = NULL;
        size_t size, key_size = 0;
        if (p->holding) { /* the record a full queue held back: the same payload and key (each is drawn once) */
                value = p->held_value, size = p->held_size, key = p->held_key, key_size = p->held_key_size;
                p->holding = 0;
        } else {
                next_payload(p, &value, &size);
                if (p->keys.turns)
                        next_turn(&p->keys, &key, &key_size);
        }
        /* Kept before the record is queued, so its delivery report always finds it (see intended_of). */
        if (p->track_acks && p->counting && p->rate <= 0) {
                if (grow((void **)&p->send_times, &p->send_times_capacity, sizeof(*p->send_times), p->sequence)) {
                        kp_fail(&p->common, "out of memory", "no memory for the send times of tracked records");
                        return -1;
                }
                p->send_times[p->sequence] = intended;
        }
        /* A list of one header (RD_KAFKA_V_HEADER would make room for eight in every record queued). */
        rd_kafka_headers_t *headers = rd_kafka_headers_new(1);
        if (!headers || rd_kafka_header_add(headers, KP_HEADER, -1, identity, KP_IDENTITY_SIZE)) {
                if (headers)
                        rd_kafka_headers_destroy(headers);
                kp_fail(&p->common, "out of memory", "no memory for a record's header");
                return -1;
        }
        for (;;) {
                /* The payload is not copied (no RD_KAFKA_MSG_F_COPY, as rdkafka_performance sends): it points into
                 * the pool or the lines, which live until kp_producer_free, after the client is destroyed. */
                rd_kafka_resp_err_t err = rd_kafka_producev(
                    p->rk, RD_KAFKA_V_RKT(p->rkt), RD_KAFKA_V_MSGFLAGS(0), RD_KAFKA_V_VALUE((void *)value, size),
                    RD_KAFKA_V_KEY(key, key_size), RD_KAFKA_V_HEADERS(headers),
                    RD_KAFKA_V_OPAQUE((void *)(uintptr_t)p->sequence), RD_KAFKA_V_END);
                if (!err)
                        break; /* the record owns its headers now */
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                        rd_kafka_headers_destroy(headers);
                        kp_fail(&p->common, "cannot produce", "cannot produce to %s: %s", p->topic, rd_kafka_err2str(err));
                        return -1;
                }
                double now = kp_wall();
                if (now >= until) { /* the brokers may have taken nothing for long: the caller judges */
                        rd_kafka_headers_destroy(headers);
                        p->held_value = value, p->held_size = size, p->held_key = key, p->held_key_size = key_size;
                        p->holding = 1;
                        return SEND_FULL;
                }
                serve(p, QUEUE_FULL_POLL_MS); /* the local queue is full: let librdkafka drain it */
                if (p->record_latency)
                        sent = kp_wall(); /* (as librdkafka's latency, from the record's enqueueing) */
        }
        if (p->record_latency) /* (its report is served by this thread, after this) */
                p->sent_at[p->sequence % SENT_RING] = (sent_stamp){p->sequence + 1, sent};
        p->sequence++;
        return 0;
}

/* A transaction call's error as the loop's failure (cause: "transaction <what> failed", as the Python loop's); 0 when
 * there was none. */
static int txn_failed(kp_producer *p, rd_kafka_error_t *error, const char *what, const char *cause) {
        if (!error)
                return 0;
        kp_fail(&p->common, cause, "cannot %s a transaction: %s", what, rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
        return -1;
}
#define TXN_INIT "initialise", "transaction initialise failed"
#define TXN_BEGIN "begin", "transaction begin failed"
#define TXN_COMMIT "commit", "transaction commit failed"
#define TXN_ABORT "abort", "transaction abort failed"

/* Make the producer transactional (its conf has a transactional.id): each measured transaction ends after records
 * records, or ms milliseconds when records is 0, and an even abort share of them is aborted; the warm-up records
 * are one transaction, committed once the last is sent (kp_producer_warm_up). 0, or -1 (kp_failure_message says
 * why). */
int kp_producer_transactions(kp_producer *p, uint64_t records, double ms, double abort, double timeout_s) {
        p->transacting = 1;
        p->txn_records = records;
        p->txn_ms = ms;
        p->txn_abort = abort;
        p->txn_timeout_ms = kp_ms(timeout_s);
        return txn_failed(p, rd_kafka_init_transactions(p->rk, p->txn_timeout_ms), TXN_INIT);
}

/* End the open transaction after p->sent records (aborted ones flushed first, so their records exist), then begin
 * the next unless last; 0, or -1 (failed). The rule of kperf.drivers.transactions.PythonTransactions.end. */
static int end_transaction(kp_producer *p, int last) {
        if (!p->txn_open || p->sent == p->txn_first) /* none open, or it holds no record */
                return 0;
        if (floor((double)(p->txn_index + 1) * p->txn_abort) > floor((double)p->txn_index * p->txn_abort)) {
                rd_kafka_flush(p->rk, p->txn_timeout_ms);
                if (rd_kafka_outq_len(p->rk) > 0) {
                        kp_fail(&p->common, "transaction abort failed",
                                "%d records of a transaction to abort were not acknowledged within %d ms",
                                rd_kafka_outq_len(p->rk), p->txn_timeout_ms);
                        return -1;
                }
                if (txn_failed(p, rd_kafka_abort_transaction(p->rk, p->txn_timeout_ms), TXN_ABORT))
                        return -1;
                p->aborts++;
                p->aborted_records += p->acked - p->txn_acked;
        } else {
                double began = kp_wall();
                if (txn_failed(p, rd_kafka_commit_transaction(p->rk, p->txn_timeout_ms), TXN_COMMIT))
                        return -1;
                p->commits++;
                p->commit_s += kp_wall() - began;
        }
        p->txn_acked = p->acked;
        p->txn_index++;
        p->txn_first = p->sent;
        p->txn_open = !last;
        if (last)
                return 0;
        if (txn_failed(p, rd_kafka_begin_transaction(p->rk), TXN_BEGIN))
                return -1;
        p->txn_began = kp_wall();
        return 0;
}

/* Whether the open transaction is due to end, p->sent records queued, at now. */
static int transaction_due(const kp_producer *p, double now) {
        if (p->txn_records)
                return p->sent - p->txn_first >= p->txn_records;
        return (now - p->txn_began) * 1000 >= p->txn_ms;
}

/* A transactional producer's measured transactions: committed, aborted, the aborted ones' acknowledged records,
 * and the seconds its commits took. */
void kp_producer_transactions_tally(const kp_producer *p, uint64_t counts[3], double *commit_s) {
        counts[0] = p->commits;
        counts[1] = p->aborts;
        counts[2] = p->aborted_records;
        *commit_s = p->commit_s;
}

/* Send unmeasured warm-up records, stamped with their send time, until records of them were sent: KP_DONE, KP_FULL
 * when the client's queue was still full at until (call again for the rest), KP_FAILED when one cannot be sent. */
int kp_producer_warm_up(kp_producer *p, uint64_t records, double until) {
        if (p->transacting && records && p->warm_txn == 0) { /* their transaction (Python: PythonTransactions) */
                if (txn_failed(p, rd_kafka_begin_transaction(p->rk), TXN_BEGIN))
                        return KP_FAILED;
                p->warm_txn = 1;
        }
        while (p->warmup < records) {
                double now = kp_wall();
                int queued = send_record(p, now, now, until);
                if (queued)
                        return queued == SEND_FULL ? KP_FULL : KP_FAILED;
                p->warmup++;
        }
        if (p->warm_txn == 1) { /* committed before the clock starts, and before any wait for consumer groups */
                if (txn_failed(p, rd_kafka_commit_transaction(p->rk, p->txn_timeout_ms), TXN_COMMIT))
                        return KP_FAILED;
                p->warm_txn = 2;
        }
        return KP_DONE;
}

/* Warm-up records sent so far. */
uint64_t kp_producer_warmed(const kp_producer *p) {
        return p->warmup;
}

/* Serve delivery reports until none is outstanding or timeout_s passed; how many are outstanding, or -1 when the
 * loop failed meanwhile (an acknowledgement it could not track: kp_failure_message says so). */
int kp_producer_flush(kp_producer *p, double timeout_s) {
        rd_kafka_flush(p->rk, kp_ms(timeout_s));
        return p->common.cause ? -1 : rd_kafka_outq_len(p->rk);
}

/* Count acknowledgements from now on; a transactional producer begins its first measured transaction (a local
 * call). 0, or -1 (failed). */
int kp_producer_start(kp_producer *p, double started) {
        p->started = started;
        p->counting = 1;
        if (!p->transacting)
                return 0;
        if (txn_failed(p, rd_kafka_begin_transaction(p->rk), TXN_BEGIN))
                return -1;
        p->txn_open = 1;
        p->txn_began = kp_wall();
        return 0;
}

/* ProducerLoop.run's sending: KP_BOUNDARY, KP_DONE, KP_BEHIND or KP_FULL as the Python loop returns them, KP_FAILED when a record
 * could not be sent or memory ran out (kp_failure_message says which). The order of the checks is the Python
 * loop's. */
static int run_records(kp_producer *p, double until, double deadline, double total) {
        while ((double)p->sent < total) {
                if (p->common.cause)
                        return KP_FAILED;
                double now = kp_wall();
                if (now >= until)
                        return KP_BOUNDARY;
                if (p->rate > 0) {
                        double intended = p->started + (double)p->sent / p->rate;
                        if (intended >= deadline)
                                return KP_DONE;
                        double waited = now;
                        while (waited < intended) { /* serve delivery reports while waiting for the record's turn */
                                if (waited >= until)
                                        return KP_BOUNDARY; /* (a slow pace: its window ends first) */
                                wait_turn(p, fmin(intended, until) - waited);
                                waited = kp_wall();
                        }
                        if (now - intended > p->give_up_behind_s)
                                return KP_BEHIND;
                        int queued = send_record(p, intended, waited, until);
                        if (queued)
                                return queued == SEND_FULL ? KP_FULL : KP_FAILED;
                        serve(p, 0);
                } else {
                        if (now >= deadline)
                                return KP_DONE;
                        int queued = send_record(p, now, now, until);
                        if (queued)
                                return queued == SEND_FULL ? KP_FULL : KP_FAILED;
                        if (p->sent % POLL_EVERY == 0)
                                serve(p, 0);
                }
                p->sent++;
                if (p->txn_open && transaction_due(p, now) && end_transaction(p, 0))
                        return KP_FAILED;
        }
        return p->common.cause ? KP_FAILED : KP_DONE;
}

/* ProducerLoop.run: run_records, then a transactional producer's last transaction ended once it stops sending. */
int kp_producer_run(kp_producer *p, double until, double deadline, double total) {
        int status = run_records(p, until, deadline, total);
        if ((status == KP_DONE || status == KP_BEHIND) && end_transaction(p, 1))
                return KP_FAILED;
        return status;
}

uint64_t kp_producer_sent(const kp_producer *p) {
        return p->sent;
}

/* Measured records acknowledged, their payload bytes, and deliveries that failed. */
void kp_producer_counts(const kp_producer *p, uint64_t counts[3]) {
        counts[0] = p->acked;
        counts[1] = p->bytes;
        counts[2] = p->common.failed;
}

/* The send-to-ack latencies (intended 0) or the intended-time ones (1). */
kp_recorder *kp_producer_recorder(kp_producer *p, int intended) {
        return intended ? p->intended_latency : p->ack_latency;
}

/* The tracked acknowledgements so far, in acknowledgement order (kp_ack: u64 sequence, i64 partition, f64 ack
 * time, f64 intended time); how many. */
size_t kp_producer_acks(const kp_producer *p, const kp_ack **acks) {
        *acks = p->acks;
        return p->n_acks;
}

/* Free the client: what is still queued or in flight is purged (the caller flushed what it waits for). Reports
 * are no longer counted, so what the loop counted stays what it was. */
void kp_producer_close(kp_producer *p) {
        p->counting = 0;
        if (p->rkt)
                rd_kafka_topic_destroy(p->rkt);
        p->rkt = NULL;
        if (p->rk) {
                rd_kafka_purge(p->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
                rd_kafka_destroy(p->rk); /* (its threads no longer write to the wake pipe) */
        }
        p->rk = NULL;
        for (int end = 0; end < 2; end++) {
                if (p->wake[end] >= 0)
                        close(p->wake[end]);
                p->wake[end] = -1;
        }
}
