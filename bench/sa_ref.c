/* Plain C reference of fairgrid's SA step (bench only; see bench/sa_throughput.py).
 *
 * The same algorithm as fairgrid.solvers.annealing, line for line: SplitMix64 stream,
 * multiply-shift draws, block-first sampling and t <- alpha*t every step (thesis
 * schedule), cell-first sampling and homogeneous chains (Lewis schedule), delta
 * evaluation on per-row/column counts. Same seed, same trajectory: the benchmark checks
 * that steps and final grids agree with the numba kernel before it compares speed.
 *
 * usage: sa_ref SCHEDULE PUZZLE MAX_STEPS  < seeds (one uint64 a line)
 * prints, per seed: steps reheats cost checksum ; then "seconds <wall time of the runs>"
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXS 25
#define MAXC (MAXS * MAXS)

static int S, N, ORD;
static int givens[MAXC], row_[MAXC], col_[MAXC], cell_block[MAXC], cell_pos[MAXC];
static int blk_free[MAXS][MAXS], blk_nfree[MAXS], blk_missing[MAXS][MAXS];
static int mblocks[MAXS], nmb, mcells[MAXC], nmc, nfree;

static inline uint64_t next_u64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static inline int64_t below32(uint64_t bits, uint64_t m) { return (int64_t)((bits * m) >> 32); }
static inline int64_t below21(uint64_t bits, uint64_t m) { return (int64_t)((bits * m) >> 21); }
static inline double unit_float(uint64_t bits) { return (double)(bits >> 11) * (1.0 / 9007199254740992.0); }

static int symbol(char ch) {
    if (ch == '.' || ch == '0') return 0;
    if (ch >= '1' && ch <= '9') return ch - '0';
    if (ch >= 'A' && ch <= 'P') return ch - 'A' + 10;
    if (ch >= 'a' && ch <= 'p') return ch - 'a' + 10;
    return -1;
}

static void setup(const char *text) {
    N = (int)strlen(text);
    for (ORD = 2; ORD <= 5 && ORD * ORD * ORD * ORD != N; ORD++) {}
    if (ORD > 5) { fprintf(stderr, "bad puzzle length %d\n", N); exit(2); }
    S = ORD * ORD;
    for (int c = 0; c < N; c++) {
        givens[c] = symbol(text[c]);
        row_[c] = c / S; col_[c] = c % S;
        cell_block[c] = (row_[c] / ORD) * ORD + col_[c] / ORD;
        cell_pos[c] = -1;
    }
    nmb = 0; nmc = 0; nfree = 0;
    for (int b = 0; b < S; b++) {
        int present[MAXS + 1] = {0}, k = 0, m = 0;
        for (int c = 0; c < N; c++) {
            if (cell_block[c] != b) continue;
            if (givens[c]) present[givens[c]] = 1;
            else { cell_pos[c] = k; blk_free[b][k++] = c; }
        }
        for (int d = 1; d <= S; d++) if (!present[d]) blk_missing[b][m++] = d;
        blk_nfree[b] = k; nfree += k;
        if (k >= 2) mblocks[nmb++] = b;
    }
    for (int c = 0; c < N; c++)
        if (!givens[c] && blk_nfree[cell_block[c]] >= 2) mcells[nmc++] = c;
}

static int grid[MAXC];
static int64_t last[MAXC];
static int rowc[MAXS * (MAXS + 1)], colc[MAXS * (MAXS + 1)];

static uint64_t fill_blocks(uint64_t st) {
    for (int c = 0; c < N; c++) grid[c] = givens[c];
    for (int b = 0; b < S; b++) {
        int k = blk_nfree[b];
        for (int i = 0; i < k; i++) grid[blk_free[b][i]] = blk_missing[b][i];
        for (int i = k - 1; i > 0; i--) {
            uint64_t r = next_u64(&st);
            int j = (int)below32(r >> 32, (uint64_t)(i + 1));
            int ci = blk_free[b][i], cj = blk_free[b][j], t = grid[ci];
            grid[ci] = grid[cj]; grid[cj] = t;
        }
    }
    return st;
}

static int counts_and_cost(void) {
    int s1 = S + 1, cost = 0;
    memset(rowc, 0, sizeof rowc); memset(colc, 0, sizeof colc);
    for (int c = 0; c < N; c++) { rowc[row_[c] * s1 + grid[c]]++; colc[col_[c] * s1 + grid[c]]++; }
    for (int u = 0; u < S; u++)
        for (int d = 1; d <= S; d++) cost += (rowc[u * s1 + d] == 0) + (colc[u * s1 + d] == 0);
    return cost;
}

static inline int swap_delta(int ra, int ca, int da, int rb, int cb, int db) {
    int s1 = S + 1, d = 0;
    if (ra != rb) {
        if (rowc[ra * s1 + da] == 1) d++;
        if (rowc[ra * s1 + db] == 0) d--;
        if (rowc[rb * s1 + db] == 1) d++;
        if (rowc[rb * s1 + da] == 0) d--;
    }
    if (ca != cb) {
        if (colc[ca * s1 + da] == 1) d++;
        if (colc[ca * s1 + db] == 0) d--;
        if (colc[cb * s1 + db] == 1) d++;
        if (colc[cb * s1 + da] == 0) d--;
    }
    return d;
}

static inline void apply_swap(int a, int b, int ra, int ca, int da, int rb, int cb, int db) {
    int s1 = S + 1;
    grid[a] = db; grid[b] = da;
    rowc[ra * s1 + da]--; rowc[ra * s1 + db]++; rowc[rb * s1 + db]--; rowc[rb * s1 + da]++;
    colc[ca * s1 + da]--; colc[ca * s1 + db]++; colc[cb * s1 + db]--; colc[cb * s1 + da]++;
}

static void run_thesis(uint64_t st, int64_t max_steps, int64_t *o_steps, int64_t *o_reheats, int *o_cost) {
    const double t0 = 40.0, alpha = 0.99995, t_min = 0.05;
    st = fill_blocks(st);
    int cost = counts_and_cost();
    for (int c = 0; c < N; c++) last[c] = givens[c] ? -1 : 0;
    double t = t0;
    int64_t steps = 0, reheats = 0;
    while (nmb && cost > 0 && steps < max_steps) {
        steps++;
        uint64_t r = next_u64(&st);
        int b = mblocks[below21(r >> 43, (uint64_t)nmb)];
        int k = blk_nfree[b];
        int64_t i = below21((r >> 22) & 0x1FFFFF, (uint64_t)k);
        int64_t j = below21((r >> 1) & 0x1FFFFF, (uint64_t)(k - 1));
        if (j >= i) j++;
        int a = blk_free[b][i], c = blk_free[b][j];
        int ra = row_[a], ca = col_[a], da = grid[a], rc = row_[c], cc = col_[c], dc = grid[c];
        int delta = swap_delta(ra, ca, da, rc, cc, dc);
        int accept = delta <= 0;
        if (!accept) { r = next_u64(&st); accept = unit_float(r) < exp(-delta / t); }
        if (accept) { apply_swap(a, c, ra, ca, da, rc, cc, dc); cost += delta; last[a] = steps; last[c] = steps; }
        t *= alpha;
        if (t < t_min) { t = t0; reheats++; }
    }
    *o_steps = steps; *o_reheats = reheats; *o_cost = cost;
}

static inline void lewis_pick(uint64_t r, int *pa, int *pc) {
    int a = mcells[below32(r >> 32, (uint64_t)nmc)];
    int b = cell_block[a];
    int64_t j = below32(r & 0xFFFFFFFFULL, (uint64_t)(blk_nfree[b] - 1));
    if (j >= cell_pos[a]) j++;
    *pa = a; *pc = blk_free[b][j];
}

static void run_lewis(uint64_t st, int64_t max_steps, int64_t *o_steps, int64_t *o_reheats, int *o_cost) {
    const double alpha = 0.99; const int stall_chains = 20, sample = 200;
    st = fill_blocks(st);
    int cost = counts_and_cost();
    for (int c = 0; c < N; c++) last[c] = givens[c] ? -1 : 0;
    *o_steps = 0; *o_reheats = 0; *o_cost = cost;
    if (!nmc) return;
    double total = 0, total2 = 0;
    for (int s = 0; s < sample; s++) {
        int a, c; lewis_pick(next_u64(&st), &a, &c);
        int ra = row_[a], ca = col_[a], da = grid[a], rc = row_[c], cc = col_[c], dc = grid[c];
        cost += swap_delta(ra, ca, da, rc, cc, dc);
        apply_swap(a, c, ra, ca, da, rc, cc, dc);
        total += cost; total2 += (double)cost * cost;
    }
    double mean = total / sample, var = total2 / sample - mean * mean;
    double t0 = var > 1e-12 ? sqrt(var) : 1.0, t = t0, p[9];
    int64_t ml = (int64_t)nfree * nfree, steps = 0, reheats = 0;
    int prev_best = cost, stall = 0;
    while (cost > 0 && steps < max_steps) {
        for (int d = 1; d < 9; d++) p[d] = exp(-d / t);
        int chain_best = cost;
        for (int64_t m = 0; m < ml; m++) {
            steps++;
            int a, c; lewis_pick(next_u64(&st), &a, &c);
            int ra = row_[a], ca = col_[a], da = grid[a], rc = row_[c], cc = col_[c], dc = grid[c];
            int delta = swap_delta(ra, ca, da, rc, cc, dc);
            int accept = delta <= 0;
            if (!accept) accept = unit_float(next_u64(&st)) < p[delta];
            if (accept) {
                apply_swap(a, c, ra, ca, da, rc, cc, dc); cost += delta; last[a] = steps; last[c] = steps;
                if (cost < chain_best) chain_best = cost;
                if (cost == 0) break;
            }
            if (steps >= max_steps) break;
        }
        if (cost == 0 || steps >= max_steps) break;
        t *= alpha;
        stall = chain_best < prev_best ? 0 : stall + 1;
        prev_best = chain_best;
        if (stall >= stall_chains) {
            st = fill_blocks(st); cost = counts_and_cost(); prev_best = cost; stall = 0; t = t0; reheats++;
            for (int c = 0; c < N; c++) if (!givens[c]) last[c] = steps;
        }
    }
    *o_steps = steps; *o_reheats = reheats; *o_cost = cost;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: sa_ref thesis|lewis PUZZLE MAX_STEPS < seeds\n"); return 2; }
    int lewis = strcmp(argv[1], "lewis") == 0;
    setup(argv[2]);
    int64_t max_steps = atoll(argv[3]);
    uint64_t seeds[100000]; int n = 0;
    while (n < 100000 && scanf("%llu", (unsigned long long *)&seeds[n]) == 1) n++;
    static int64_t out_steps[100000], out_reheats[100000]; static int out_cost[100000];
    static uint64_t out_sum[100000];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int k = 0; k < n; k++) {
        if (lewis) run_lewis(seeds[k], max_steps, &out_steps[k], &out_reheats[k], &out_cost[k]);
        else run_thesis(seeds[k], max_steps, &out_steps[k], &out_reheats[k], &out_cost[k]);
        uint64_t sum = 0;
        for (int c = 0; c < N; c++) sum = sum * 1000003ULL + (uint64_t)grid[c] * 131ULL + (uint64_t)(last[c] + 1);
        out_sum[k] = sum;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (int k = 0; k < n; k++)
        printf("%lld %lld %d %llu\n", (long long)out_steps[k], (long long)out_reheats[k], out_cost[k],
               (unsigned long long)out_sum[k]);
    printf("seconds %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
    return 0;
}
