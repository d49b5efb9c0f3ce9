/* A latency recorder: counts, not a buffer, so its memory is fixed whatever the record count.
 *
 * It keeps what kperf.drivers.latency.Recorder keeps, computed the same way in the same floating point so that
 * Python turns it into the same bytes (kperf/drivers/native/recorder.py):
 * - the histogram: each latency in microseconds, clipped to [1, MAX_US] and rounded down to four significant
 *   digits (Recorder.flush: micros // step * step, step = 10 ** max(floor(log10(micros)) - 3, 0)), counted per
 *   rounded value; Python records each distinct value with its count into the HdrHistogram, as Recorder does;
 * - windowed, the current window's bins (kperf.latency_bins.to_bins: floor(log(max(micros, 1)) / log(1.02))),
 *   counted per bin and handed over and forgotten at each window boundary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loops.h"

#define MAX_US 600000000.0 /* kperf.drivers.latency.MAX_US */
/* A rounded value is m * 10^e: e from 0 (below 10^4 us) to 5 (MAX_US has nine digits, four kept), m at most
 * 10,000 (9,999 but for a log10 that rounds a value just below a power of ten the other way). */
#define EXPONENTS 6
#define MANTISSAS 10001
_Static_assert(EXPONENTS * MANTISSAS == KP_RECORDER_VALUES, "loops.h's bound");
static const double STEPS[EXPONENTS] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5}; /* 10.0 ** exponent, exact */
#define BIN_RATIO 1.02 /* kperf.latency_bins.BIN_RATIO */
#define BINS KP_RECORDER_BINS

struct kp_recorder {
        uint64_t values[EXPONENTS * MANTISSAS]; /* counts by rounded value: index e * MANTISSAS + m */
        uint64_t *bins;                         /* windowed: this window's counts by bin, else NULL */
        int low, high;                          /* the window's lowest and highest bin; low > high: none */
        double log_ratio;                       /* log(BIN_RATIO), as Python's math.log computes it */
};

kp_recorder *kp_recorder_new(int windowed) {
        kp_recorder *recorder = calloc(1, sizeof(*recorder));
        if (!recorder)
                return NULL;
        if (windowed && !(recorder->bins = calloc(BINS, sizeof(*recorder->bins)))) {
                free(recorder);
                return NULL;
        }
        recorder->low = BINS;
        recorder->high = -1;
        volatile double ratio = BIN_RATIO; /* the C library's log at run time, not the compiler's constant */
        recorder->log_ratio = log(ratio);
        return recorder;
}

void kp_recorder_free(kp_recorder *recorder) {
        if (recorder)
                free(recorder->bins);
        free(recorder);
}

/* a // b for positive a and b, as numpy's floor_divide computes it for floats (CPython's float_divmod). */
static double floor_divide(double a, double b) {
        double mod = fmod(a, b);
        double div = (a - mod) / b;
        if (div == 0.0)
                return 0.0;
        double floored = floor(div);
        return div - floored > 0.5 ? floored + 1.0 : floored;
}

void kp_recorder_add(kp_recorder *recorder, double seconds) {
        double micros = seconds * 1e6;
        if (recorder->bins) {
                double binned = micros > 1.0 ? micros : 1.0; /* np.maximum(micros, 1.0) */
                double found = floor(log(binned) / recorder->log_ratio);
                int bin = found < BINS ? (int)found : BINS - 1; /* (an infinite latency: the last bin) */
                recorder->bins[bin]++;
                if (bin < recorder->low)
                        recorder->low = bin;
                if (bin > recorder->high)
                        recorder->high = bin;
        }
        /* np.clip(micros, 1, MAX_US) (and a NaN, which no clock gives, as 1) */
        micros = !(micros >= 1.0) ? 1.0 : micros > MAX_US ? MAX_US : micros;
        int exponent = (int)fmax(floor(log10(micros)) - 3.0, 0.0);
        double mantissa = exponent == 0 ? floor(micros) : floor_divide(micros, STEPS[exponent]);
        recorder->values[exponent * MANTISSAS + (int)mantissa]++;
}

/* The rounded values recorded (microseconds) and their counts; how many (at most max: the caller makes it
 * KP_RECORDER_VALUES, so all are taken). */
size_t kp_recorder_values(const kp_recorder *recorder, int64_t *values, uint64_t *counts, size_t max) {
        size_t found = 0;
        int64_t step = 1;
        for (int exponent = 0; exponent < EXPONENTS; exponent++, step *= 10) {
                const uint64_t *row = recorder->values + exponent * MANTISSAS;
                for (int mantissa = 0; mantissa < MANTISSAS && found < max; mantissa++) {
                        if (row[mantissa]) {
                                values[found] = mantissa * step;
                                counts[found++] = row[mantissa];
                        }
                }
        }
        return found;
}

/* This window's bins and their counts, in bin order, then forgotten; how many (at most max: the caller makes it
 * KP_RECORDER_BINS, so all are taken). */
size_t kp_recorder_take_bins(kp_recorder *recorder, int64_t *bins, uint64_t *counts, size_t max) {
        size_t found = 0;
        if (!recorder->bins)
                return 0;
        for (int bin = recorder->low; bin <= recorder->high && found < max; bin++) {
                if (recorder->bins[bin]) {
                        bins[found] = bin;
                        counts[found++] = recorder->bins[bin];
                        recorder->bins[bin] = 0;
                }
        }
        recorder->low = BINS;
        recorder->high = -1;
        return found;
}

/* How many values (bins: 0) or bins (1) a recorder holds at most: what Python sizes its arrays to. */
size_t kp_recorder_limits(int bins) {
        return bins ? KP_RECORDER_BINS : KP_RECORDER_VALUES;
}
