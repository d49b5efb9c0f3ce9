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
        double decades[EXPONENTS - 1];          /* decades[i]: the least x whose floor(log10(x)) is i + 4 or more */
};

/* The least double whose floor(log10()) is at least k (the C library's log10, rising with x): 10^k, or a float just
 * below it that log10 rounds up to k. Comparing with it gives log10's decade without a log10 per latency. */
static double decade(int k) {
        double x = 1.0;
        for (int i = 0; i < k; i++)
                x *= 10.0; /* exact */
        while (floor(log10(nextafter(x, 0.0))) >= k)
                x = nextafter(x, 0.0);
        return x;
}

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
        for (int e = 1; e < EXPONENTS; e++)
                recorder->decades[e - 1] = decade(e + 3);
        return recorder;
}

void kp_recorder_free(kp_recorder *recorder) {
        if (recorder)
                free(recorder->bins);
        free(recorder);
}

/* a // b for positive a and b, b a power of ten, as numpy's floor_divide computes it for floats (CPython's
 * float_divmod: from fmod, exact, so the result is the true floor of a / b). The quotient's floor, corrected by one
 * either way where a / b rounded across an integer: a product of an integer below 2^53 and a power of ten is exact,
 * so each comparison is. (fmod itself took half the time of recording a latency.) */
static double floor_divide(double a, double b) {
        double q = (double)(int64_t)(a / b); /* floor: a / b is positive, below 2^63 */
        if (q * b > a)
                return q - 1.0;
        if ((q + 1.0) * b <= a)
                return q + 1.0;
        return q;
}

void kp_recorder_add(kp_recorder *recorder, double seconds) {
        double micros = seconds * 1e6;
        if (recorder->bins) {
                double binned = micros > 1.0 ? micros : 1.0; /* np.maximum(micros, 1.0) */
                double found = log(binned) / recorder->log_ratio; /* >= 0: its floor is its integer part */
                int bin = found < BINS ? (int)found : BINS - 1; /* (an infinite latency: the last bin) */
                recorder->bins[bin]++;
                if (bin < recorder->low)
                        recorder->low = bin;
                if (bin > recorder->high)
                        recorder->high = bin;
        }
        /* np.clip(micros, 1, MAX_US) (and a NaN, which no clock gives, as 1) */
        micros = !(micros >= 1.0) ? 1.0 : micros > MAX_US ? MAX_US : micros;
        int exponent = 0; /* max(floor(log10(micros)) - 3, 0) */
        while (exponent < EXPONENTS - 1 && micros >= recorder->decades[exponent])
                exponent++;
        double mantissa = exponent == 0 ? (double)(int64_t)micros : floor_divide(micros, STEPS[exponent]);
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
