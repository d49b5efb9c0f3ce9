/* The native consumer loop: kperf.drivers.consumer_loop.PythonConsumerLoop's read / verify loop over librdkafka's
 * high-level consumer, record for record (NativeConsumerLoop drives it).
 *
 * A batch is the first record a poll returns (waiting at most poll_s) and whatever else is fetched already (up to
 * batch records in all); per record, only librdkafka's own calls, the ledger's bit and, end to end, a latency. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loops.h"

struct kp_consumer {
        kp_common common; /* first: Python reads failures and errors through it */
        rd_kafka_t *rk;
        rd_kafka_queue_t *queue; /* the consumer's: what follows a batch's first record is taken from it */
        char *topic;
        int end_to_end;
        double poll_s;
        rd_kafka_message_t **batch;
        size_t batch_size;
        kp_consumed consumed;
        kp_ledger *ledger;
        kp_recorder *e2e;
};

static int cooperative(rd_kafka_t *rk) {
        const char *protocol = rd_kafka_rebalance_protocol(rk);
        return protocol && !strcmp(protocol, "COOPERATIVE");
}

/* The code of an incremental (cooperative) assignment's error, which is freed; NO_ERROR for none. */
static rd_kafka_resp_err_t code_of(rd_kafka_error_t *error) {
        if (!error)
                return RD_KAFKA_RESP_ERR_NO_ERROR;
        rd_kafka_resp_err_t err = rd_kafka_error_code(error);
        rd_kafka_error_destroy(error);
        return err;
}

static void take(kp_consumer *c, rd_kafka_topic_partition_list_t *partitions) {
        rd_kafka_resp_err_t err = cooperative(c->rk) ? code_of(rd_kafka_incremental_assign(c->rk, partitions))
                                                     : rd_kafka_assign(c->rk, partitions);
        if (err)
                kp_fail(&c->common, "assign failed", "cannot take the partitions of %s assigned: %s", c->topic,
                        rd_kafka_err2str(err));
}

/* Why a hand-over commit may not be made, and the loop goes on: kperf.drivers.consumer_loop.NOT_HANDED_OVER. */
static int not_handed_over(rd_kafka_resp_err_t err) {
        return err == RD_KAFKA_RESP_ERR__NO_OFFSET || err == RD_KAFKA_RESP_ERR__WAIT_COORD ||
               err == RD_KAFKA_RESP_ERR_NOT_COORDINATOR || err == RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE ||
               err == RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS || err == RD_KAFKA_RESP_ERR__TRANSPORT;
}

/* On losing partitions, commit what was read of them first, so their next owner goes on from there (a
 * synchronous commit, as the Python loop's on_revoke makes); none for partitions lost, which may be another's
 * already (the Python loop's on_lost). */
static void hand_over(kp_consumer *c, rd_kafka_topic_partition_list_t *partitions) {
        if (partitions->cnt && !rd_kafka_assignment_lost(c->rk)) {
                rd_kafka_resp_err_t err = rd_kafka_commit(c->rk, NULL, 0);
                if (err && !not_handed_over(err))
                        kp_fail(&c->common, "commit failed", "cannot commit what was read of %s on losing its partitions: %s",
                                c->topic, rd_kafka_err2str(err));
        }
        rd_kafka_resp_err_t err = cooperative(c->rk) ? code_of(rd_kafka_incremental_unassign(c->rk, partitions))
                                                     : rd_kafka_assign(c->rk, NULL);
        if (err) /* (confluent-kafka raises it from its rebalance callback) */
                kp_fail(&c->common, "unassign failed", "cannot give up the partitions of %s revoked: %s", c->topic,
                        rd_kafka_err2str(err));
}

/* Rebalances, served inside rd_kafka_consumer_poll on the loop's thread: what confluent-kafka does around the
 * Python loop's on_assign (note when the group formed and first gave partitions) and on_revoke (hand_over). */
static void rebalanced(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *partitions,
                       void *opaque) {
        kp_consumer *c = opaque;
        (void)rk;
        if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
                double now = kp_wall();
                if (isnan(c->consumed.joined))
                        c->consumed.joined = now;
                if (partitions->cnt && isnan(c->consumed.assigned))
                        c->consumed.assigned = now;
                take(c, partitions);
        } else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
                hand_over(c, partitions);
        } else {
                rd_kafka_assign(c->rk, NULL); /* a failed rebalance: librdkafka asks for its state to be reset */
        }
}

/* A consumer with librdkafka settings conf (taken, whatever happens; group.id and the rest set by the caller);
 * NULL with errstr set when it cannot be made. */
kp_consumer *kp_consumer_new(rd_kafka_conf_t *conf, const char *topic, int end_to_end, size_t batch, double poll_s,
                             char *errstr, size_t errstr_size) {
        kp_consumer *c = calloc(1, sizeof(*c));
        if (!c || !(c->topic = strdup(topic)) || !(c->batch = calloc(batch, sizeof(*c->batch))) ||
            !(c->ledger = kp_ledger_new()) || !(c->e2e = kp_recorder_new(1))) {
                snprintf(errstr, errstr_size, "no memory for a consumer");
                rd_kafka_conf_destroy(conf);
                kp_consumer_free(c);
                return NULL;
        }
        c->end_to_end = end_to_end;
        c->batch_size = batch;
        c->poll_s = poll_s;
        c->consumed.joined = c->consumed.assigned = c->consumed.first = c->consumed.last = c->consumed.live = NAN;
        rd_kafka_conf_set_opaque(conf, c);
        rd_kafka_conf_set_rebalance_cb(conf, rebalanced);
        rd_kafka_conf_set_log_cb(conf, kp_discard_log);
        if (!(c->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, errstr_size))) {
                rd_kafka_conf_destroy(conf);
                kp_consumer_free(c);
                return NULL;
        }
        rd_kafka_poll_set_consumer(c->rk); /* as confluent-kafka: one queue serves records, rebalances and errors */
        c->queue = rd_kafka_queue_get_consumer(c->rk);
        return c;
}

void kp_consumer_free(kp_consumer *c) {
        if (!c)
                return;
        if (c->queue)
                rd_kafka_queue_destroy(c->queue);
        if (c->rk)
                rd_kafka_destroy(c->rk);
        kp_ledger_free(c->ledger);
        kp_recorder_free(c->e2e);
        free(c->batch);
        free(c->topic);
        free(c);
}

/* Join the group on the topic; -1 when librdkafka refuses. */
int kp_consumer_subscribe(kp_consumer *c) {
        rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(topics, c->topic, RD_KAFKA_PARTITION_UA);
        rd_kafka_resp_err_t err = rd_kafka_subscribe(c->rk, topics);
        rd_kafka_topic_partition_list_destroy(topics);
        if (err) {
                kp_fail(&c->common, "cannot subscribe", "cannot subscribe to %s: %s", c->topic, rd_kafka_err2str(err));
                return -1;
        }
        return 0;
}

static uint64_t get_be(const uint8_t *at, int bytes) {
        uint64_t value = 0;
        for (int i = 0; i < bytes; i++)
                value = value << 8 | at[i];
        return value;
}

/* Verify and time one record of a batch read at now: whether it is a live one (end_to_end: meant to be sent after
 * this consumer got partitions). */
static int verify(kp_consumer *c, const rd_kafka_message_t *msg, double now) {
        rd_kafka_headers_t *headers;
        const void *value;
        size_t size;
        if (rd_kafka_message_headers(msg, &headers) || rd_kafka_header_get(headers, 0, KP_HEADER, &value, &size) ||
            size != KP_IDENTITY_SIZE || !value)
                return 0; /* not a kperf record: counted, not verified */
        const uint8_t *identity = value;
        if (kp_ledger_add(c->ledger, (uint32_t)get_be(identity, 4), get_be(identity + 4, 8)))
                kp_fail(&c->common, "out of memory", "no memory for the sequence ledger of %s", c->topic);
        double intended_ns = (double)get_be(identity + 12, 8);
        /* Records meant to be sent before this consumer got partitions waited for the join, not for Kafka. */
        if (!c->end_to_end || isnan(c->consumed.assigned) || !(intended_ns >= c->consumed.assigned * 1e9))
                return 0;
        kp_recorder_add(c->e2e, now - intended_ns / 1e9);
        return 1;
}

/* ConsumerLoop.read: 1 when until passed or stop_at records were read, 0 when a poll returned nothing, -1 when the
 * loop failed (kp_failure_message says why). */
int kp_consumer_read(kp_consumer *c, double until, double stop_at) {
        kp_consumed *consumed = &c->consumed;
        double now;
        while ((now = kp_wall()) < until && (double)consumed->records < stop_at) {
                rd_kafka_message_t *head = rd_kafka_consumer_poll(c->rk, kp_ms(fmin(c->poll_s, until - now)));
                ssize_t more = 0;
                if (head) {
                        c->batch[0] = head;
                        more = rd_kafka_consume_batch_queue(c->queue, 0, c->batch + 1, c->batch_size - 1);
                        if (more < 0)
                                more = 0; /* the queue failed (errno says why): the batch is its first record */
                }
                now = kp_wall();
                uint64_t records = 0, bytes = 0;
                int live = 0;
                for (ssize_t i = 0; head && i <= more; i++) {
                        rd_kafka_message_t *msg = c->batch[i];
                        if (!msg->err) {
                                records++;
                                bytes += msg->len;
                                live |= verify(c, msg, now);
                        } else if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                                kp_count_error(&c->common, msg->err);
                        }
                        rd_kafka_message_destroy(msg);
                }
                if (c->common.cause)
                        return -1; /* a rebalance, or the ledger, failed */
                if (!head)
                        return 0; /* nothing arrived: the caller judges idling */
                if (!records)
                        continue; /* errors alone are no fetch */
                consumed->records += records;
                consumed->bytes += bytes;
                consumed->fetches++;
                if (live)
                        consumed->live = now;
                if (isnan(consumed->first))
                        consumed->first = now;
                consumed->last = now;
        }
        return c->common.cause ? -1 : 1;
}

const kp_consumed *kp_consumer_consumed(const kp_consumer *c) {
        return &c->consumed;
}

kp_ledger *kp_consumer_ledger(kp_consumer *c) {
        return c->ledger;
}

kp_recorder *kp_consumer_recorder(kp_consumer *c) {
        return c->e2e;
}

/* Leave the group (what was read is committed on losing the partitions, as in a rebalance) and free the client;
 * -1 when that commit failed. The counts stay until kp_consumer_free. */
int kp_consumer_close(kp_consumer *c) {
        if (c->queue)
                rd_kafka_queue_destroy(c->queue); /* before closing, as librdkafka asks */
        c->queue = NULL;
        if (c->rk) {
                rd_kafka_consumer_close(c->rk);
                rd_kafka_destroy(c->rk);
        }
        c->rk = NULL;
        return c->common.cause ? -1 : 0;
}
