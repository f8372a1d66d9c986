/*
 * Native reference for the benchmark: the same int8 x i16 scan with a fused bounded min-heap
 * top-k as assembly/index.ts (4 rows per loop iteration): gcc -O3 -march=native -o scan scan.c.
 * Two builds: -DSCAN_PLAIN is the same algorithm in plain C left to gcc's vectorizer (the
 * issue's "same int8 scan in C"); without it, on AVX2 machines, the dot products use explicit
 * intrinsics (16 int8 widened to i16, madd into i32: the WASM i32x4.dot_i16x8_s arithmetic at
 * twice the width), the machine's best simple kernel.
 *
 * Input file: int32 n, dims, k, reps; int8 rows[n * dims]; f32 scales[n]; i16 query[dims];
 * f32 qscale. Output (stdout): "times_ms t1 t2 ..." (the scan), "read_ms t1 t2 ..." (a plain
 * read of the same bytes as u64 words: the machine's read speed for these buffers), "top r0 ...".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__AVX2__) && !defined(SCAN_PLAIN)
#define SCAN_AVX2 1
#include <immintrin.h>
#endif

static float *hs;
static int32_t *hr;
static int hk, hsize;

static inline int worse(float sa, int32_t ra, float sb, int32_t rb) { return sa < sb || (sa == sb && ra > rb); }

static void sift_down(int i, float s, int32_t r, int size) {
  for (;;) {
    int c = 2 * i + 1;
    if (c >= size) break;
    if (c + 1 < size && worse(hs[c + 1], hr[c + 1], hs[c], hr[c])) c++;
    if (!worse(hs[c], hr[c], s, r)) break;
    hs[i] = hs[c];
    hr[i] = hr[c];
    i = c;
  }
  hs[i] = s;
  hr[i] = r;
}

static float offer(float s, int32_t r) {
  if (hsize < hk) {
    int i = hsize++;
    while (i > 0) {
      int p = (i - 1) >> 1;
      if (!worse(s, r, hs[p], hr[p])) break;
      hs[i] = hs[p];
      hr[i] = hr[p];
      i = p;
    }
    hs[i] = s;
    hr[i] = r;
  } else if (worse(hs[0], hr[0], s, r)) {
    sift_down(0, s, r, hsize);
  }
  return hsize < hk ? -__builtin_inff() : hs[0];
}

static int finish(void) {
  for (int end = hsize - 1; end > 0; end--) {
    float s = hs[end];
    int32_t r = hr[end];
    hs[end] = hs[0];
    hr[end] = hr[0];
    sift_down(0, s, r, end);
  }
  return hsize;
}

__attribute__((unused)) static int scan(const int8_t *restrict rows, const float *restrict scales, int n, int dims, const int16_t *restrict q, float qscale, int k) {
  hk = k;
  hsize = 0;
  float thr = -__builtin_inff();
  int r = 0;
  for (; r + 4 <= n; r += 4) {
    const int8_t *p0 = rows + (size_t)r * dims, *p1 = p0 + dims, *p2 = p1 + dims, *p3 = p2 + dims;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int d = 0; d < dims; d++) {
      int32_t qv = q[d];
      s0 += p0[d] * qv;
      s1 += p1[d] * qv;
      s2 += p2[d] * qv;
      s3 += p3[d] * qv;
    }
    float f0 = (float)s0 * (scales[r] * qscale), f1 = (float)s1 * (scales[r + 1] * qscale);
    float f2 = (float)s2 * (scales[r + 2] * qscale), f3 = (float)s3 * (scales[r + 3] * qscale);
    if (f0 >= thr) thr = offer(f0, r);
    if (f1 >= thr) thr = offer(f1, r + 1);
    if (f2 >= thr) thr = offer(f2, r + 2);
    if (f3 >= thr) thr = offer(f3, r + 3);
  }
  for (; r < n; r++) {
    const int8_t *p = rows + (size_t)r * dims;
    int32_t s = 0;
    for (int d = 0; d < dims; d++) s += p[d] * (int32_t)q[d];
    float f = (float)s * (scales[r] * qscale);
    if (f >= thr) thr = offer(f, r);
  }
  return finish();
}


#ifdef SCAN_AVX2
static inline int32_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

/* Rows are read 16 bytes at a time up to the padded width; the bytes past a row's end meet the
 * zero padding of the query, so they add nothing (the buffer has slack after the last row). */
static inline __m256i dot16(const int8_t *p, const int16_t *qp, __m256i acc) {
  __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(x, _mm256_loadu_si256((const __m256i *)qp)));
}

static int scan_avx2(const int8_t *restrict rows, const float *restrict scales, int n, int dims, const int16_t *restrict qp, int pd, float qscale, int k) {
  hk = k;
  hsize = 0;
  float thr = -__builtin_inff();
  int r = 0;
  for (; r + 4 <= n; r += 4) {
    const int8_t *p0 = rows + (size_t)r * dims, *p1 = p0 + dims, *p2 = p1 + dims, *p3 = p2 + dims;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (int d = 0; d < pd; d += 16) {
      a0 = dot16(p0 + d, qp + d, a0);
      a1 = dot16(p1 + d, qp + d, a1);
      a2 = dot16(p2 + d, qp + d, a2);
      a3 = dot16(p3 + d, qp + d, a3);
    }
    float f0 = (float)hsum_epi32(a0) * (scales[r] * qscale), f1 = (float)hsum_epi32(a1) * (scales[r + 1] * qscale);
    float f2 = (float)hsum_epi32(a2) * (scales[r + 2] * qscale), f3 = (float)hsum_epi32(a3) * (scales[r + 3] * qscale);
    if (f0 >= thr) thr = offer(f0, r);
    if (f1 >= thr) thr = offer(f1, r + 1);
    if (f2 >= thr) thr = offer(f2, r + 2);
    if (f3 >= thr) thr = offer(f3, r + 3);
  }
  for (; r < n; r++) {
    __m256i a = _mm256_setzero_si256();
    for (int d = 0; d < pd; d += 16) a = dot16(rows + (size_t)r * dims + d, qp + d, a);
    float f = (float)hsum_epi32(a) * (scales[r] * qscale);
    if (f >= thr) thr = offer(f, r);
  }
  return finish();
}
#endif

/* Sums every byte of the rows and scales: the read-bandwidth reference for the same buffers. */
static int64_t read_all(const uint64_t *restrict p, size_t n, const uint64_t *restrict p2, size_t n2) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i++) s += p[i];
  for (size_t i = 0; i < n2; i++) s += p2[i];
  return (int64_t)s;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: scan FILE\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror("open");
    return 1;
  }
  int32_t hdr[4];
  if (fread(hdr, 4, 4, f) != 4) return 1;
  int n = hdr[0], dims = hdr[1], k = hdr[2], reps = hdr[3];
  int8_t *rows = aligned_alloc(64, ((size_t)n * dims + 64 + 63) / 64 * 64); /* slack for 16-byte reads */
  float *scales = malloc((size_t)n * 4);
  int16_t *q = malloc((size_t)dims * 2);
  float qscale;
  if (fread(rows, 1, (size_t)n * dims, f) != (size_t)n * dims || fread(scales, 4, n, f) != (size_t)n ||
      fread(q, 2, dims, f) != (size_t)dims || fread(&qscale, 4, 1, f) != 1) {
    fprintf(stderr, "short file\n");
    return 1;
  }
  fclose(f);
  int pd = (dims + 15) & ~15;
  int16_t *qp = calloc((size_t)pd, 2); /* query padded with zeros to a multiple of 16 */
  memcpy(qp, q, (size_t)dims * 2);
  (void)qp;
  (void)pd;
  hs = malloc((size_t)k * 4);
  hr = malloc((size_t)k * 4);
  int count = 0;
  printf("times_ms");
  for (int i = 0; i < reps; i++) {
    double t0 = now_ms();
#ifdef SCAN_AVX2
    count = scan_avx2(rows, scales, n, dims, qp, pd, qscale, k);
#else
    count = scan(rows, scales, n, dims, q, qscale, k);
#endif
    printf(" %.4f", now_ms() - t0);
  }
  printf("\nread_ms");
  volatile int64_t sink = 0;
  for (int i = 0; i < reps; i++) {
    double t0 = now_ms();
    sink += read_all((const uint64_t *)rows, (size_t)n * dims / 8, (const uint64_t *)scales, (size_t)n / 2);
    printf(" %.4f", now_ms() - t0);
  }
  printf("\ntop");
  for (int i = 0; i < count; i++) printf(" %d", hr[i]);
  printf("\n");
  return 0;
}
