/* What both loops share: their failure message, the errors they count, and the header's librdkafka version. */
#include <stdarg.h>
#include <stdio.h>

#include "loops.h"

/* The first failure is kept: it is the cause, what follows is its consequence. */
void kp_fail(kp_common *common, const char *cause, const char *format, ...) {
        if (common->cause)
                return;
        va_list args;
        va_start(args, format);
        vsnprintf(common->message, sizeof(common->message), format, args);
        va_end(args);
        common->cause = cause;
}

void kp_count_error(kp_common *common, rd_kafka_resp_err_t err) {
        int index = (int)err - KP_ERR_LOWEST;
        if (index < 0 || index >= KP_ERR_CODES) /* no such code in librdkafka: its own name for that */
                index = RD_KAFKA_RESP_ERR_UNKNOWN - KP_ERR_LOWEST;
        common->errors[index]++;
        common->failed++;
}

/* librdkafka's log lines: confluent-kafka routes them to a logger kperf does not print, so the C drops them. */
void kp_discard_log(const rd_kafka_t *rk, int level, const char *facility, const char *line) {
        (void)rk, (void)level, (void)facility, (void)line;
}

const char *kp_failure_message(const void *handle) {
        return ((const kp_common *)handle)->message;
}

const char *kp_failure_cause(const void *handle) {
        const kp_common *common = handle;
        return common->cause ? common->cause : "";
}

/* The codes counted and their counts, in code order; how many (at most max). */
size_t kp_errors(const void *handle, int32_t *codes, uint64_t *counts, size_t max) {
        const kp_common *common = handle;
        size_t found = 0;
        for (int i = 0; i < KP_ERR_CODES && found < max; i++) {
                if (common->errors[i]) {
                        codes[found] = i + KP_ERR_LOWEST;
                        counts[found++] = common->errors[i];
                }
        }
        return found;
}

/* The librdkafka release whose rdkafka.h this library was compiled with: Python holds it against the
 * rd_kafka_version() of the librdkafka it loads. */
int kp_header_version(void) {
        return RD_KAFKA_VERSION;
}
