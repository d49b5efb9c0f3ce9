/* The sequence ledger: which sequence numbers of each producer arrived, one bit each, duplicates counted.
 *
 * The bits are laid out as kperf.drivers.ledger.SequenceLedger's (bit i % 8 of byte i // 8 is sequence i) and grow
 * as its bytearrays do (at least doubled), so Python takes them as they are; a duplicate is a bit already set. */
#include <stdlib.h>
#include <string.h>

#include "loops.h"

typedef struct bits {
        uint32_t producer;
        uint8_t *bytes;
        size_t capacity; /* bytes allocated */
        size_t used;     /* up to the highest byte set */
} bits;

struct kp_ledger {
        bits *producers;
        size_t count, capacity;
        size_t last; /* the producer found last: records mostly come in runs of one producer's */
        uint64_t duplicated;
};

kp_ledger *kp_ledger_new(void) {
        return calloc(1, sizeof(kp_ledger));
}

void kp_ledger_free(kp_ledger *ledger) {
        if (!ledger)
                return;
        for (size_t i = 0; i < ledger->count; i++)
                free(ledger->producers[i].bytes);
        free(ledger->producers);
        free(ledger);
}

static bits *find(kp_ledger *ledger, uint32_t producer) {
        if (ledger->count && ledger->producers[ledger->last].producer == producer)
                return &ledger->producers[ledger->last];
        for (size_t i = 0; i < ledger->count; i++) {
                if (ledger->producers[i].producer == producer) {
                        ledger->last = i;
                        return &ledger->producers[i];
                }
        }
        if (ledger->count == ledger->capacity) {
                size_t capacity = ledger->capacity ? 2 * ledger->capacity : 8;
                bits *grown = realloc(ledger->producers, capacity * sizeof(*grown));
                if (!grown)
                        return NULL;
                ledger->producers = grown;
                ledger->capacity = capacity;
        }
        ledger->last = ledger->count++;
        bits *added = &ledger->producers[ledger->last];
        memset(added, 0, sizeof(*added));
        added->producer = producer;
        return added;
}

/* Note one record; -1 when there is no memory for its bit (the ledger is unchanged), else 0. */
int kp_ledger_add(kp_ledger *ledger, uint32_t producer, uint64_t sequence) {
        bits *seen = find(ledger, producer);
        if (!seen)
                return -1;
        uint64_t index = sequence >> 3;
        uint8_t mask = (uint8_t)(1u << (sequence & 7));
        if (index >= seen->capacity) {
                if (index >= SIZE_MAX / 2)
                        return -1;
                size_t capacity = 2 * seen->capacity > index + 1 ? 2 * seen->capacity : (size_t)index + 1;
                uint8_t *grown = realloc(seen->bytes, capacity);
                if (!grown)
                        return -1;
                memset(grown + seen->capacity, 0, capacity - seen->capacity);
                seen->bytes = grown;
                seen->capacity = capacity;
        }
        if (seen->bytes[index] & mask)
                ledger->duplicated++;
        seen->bytes[index] |= mask;
        if (index >= seen->used)
                seen->used = (size_t)index + 1;
        return 0;
}

size_t kp_ledger_producers(const kp_ledger *ledger) {
        return ledger->count;
}

/* Producer number index (0 to kp_ledger_producers() - 1): its id, and its bits (size bytes, up to the highest set). */
const uint8_t *kp_ledger_bits(const kp_ledger *ledger, size_t index, uint32_t *producer, size_t *size) {
        const bits *seen = &ledger->producers[index];
        *producer = seen->producer;
        *size = seen->used;
        return seen->bytes;
}

uint64_t kp_ledger_duplicated(const kp_ledger *ledger) {
        return ledger->duplicated;
}
