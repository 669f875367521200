/* Plain C reference of fairgrid's Nurikabe SA step (bench only; see bench/nurikabe_sa.py).
 *
 * The same algorithm as fairgrid.solvers.nurikabe.annealing, line for line: SplitMix64
 * stream, multiply-shift draws, a Fisher-Yates start of sum(clues) white cells, one word
 * per proposed swap (high 32 bits: the white cell, low 32 bits: the black one), the
 * four-part cost of fairgrid.solvers.nurikabe.cost evaluated in full after every swap
 * (flood fills from the clues, over the river, and the 2x2 blocks), Metropolis with
 * exp(-delta/t), t <- alpha*t every step and a reheat to t0 below t_min. Same seed,
 * same trajectory: the benchmark checks steps, reheats, cost and a checksum of the final
 * grid and last-swap steps before it compares speed.
 *
 * usage: nurikabe_sa_ref PUZZLE T0 ALPHA T_MIN MAX_STEPS  < seeds (one uint64 a line)
 * prints, per seed: steps reheats cost checksum ; then "seconds <wall time of the runs>"
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXC 4096

static int R, C, N, NCLUE, NFREE, NWF, NBLK;
static int64_t clue[MAXC];
static int clue_cells[MAXC], free_cells[MAXC], nbr[MAXC][4], blocks[MAXC][4];
static int8_t grid[MAXC], seen[MAXC];
static int64_t last[MAXC], found[MAXC];
static int stack_[MAXC], pos[MAXC];

static inline uint64_t next_u64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static inline int64_t below32(uint64_t bits, uint64_t m) { return (int64_t)((bits * m) >> 32); }
static inline double unit_float(uint64_t bits) { return (double)(bits >> 11) * (1.0 / 9007199254740992.0); }

static void setup(const char *text) {
    if (sscanf(text, "%dx%d:", &R, &C) != 2) { fprintf(stderr, "bad puzzle header\n"); exit(2); }
    const char *cells = strchr(text, ':') + 1;
    N = R * C;
    if (N > MAXC || (int)strlen(cells) != N) { fprintf(stderr, "bad puzzle size\n"); exit(2); }
    NCLUE = NFREE = 0;
    int64_t white = 0;
    for (int c = 0; c < N; c++) {
        char ch = cells[c];
        clue[c] = ch == '.' ? 0 : (ch >= '1' && ch <= '9') ? ch - '0' : ch - 'a' + 10;
        if (clue[c]) { clue_cells[NCLUE++] = c; white += clue[c]; } else free_cells[NFREE++] = c;
        int r = c / C, k = c % C, d = 0;
        nbr[c][0] = nbr[c][1] = nbr[c][2] = nbr[c][3] = -1;
        if (r > 0) nbr[c][d++] = c - C;
        if (k > 0) nbr[c][d++] = c - 1;
        if (k < C - 1) nbr[c][d++] = c + 1;
        if (r < R - 1) nbr[c][d++] = c + C;
    }
    NWF = (int)(white - NCLUE);
    NBLK = 0;
    for (int r = 0; r + 1 < R; r++)
        for (int k = 0; k + 1 < C; k++) {
            int c = r * C + k;
            blocks[NBLK][0] = c; blocks[NBLK][1] = c + 1;
            blocks[NBLK][2] = c + C; blocks[NBLK][3] = c + C + 1; NBLK++;
        }
}

static int64_t grid_cost(void) {
    memset(seen, 0, (size_t)N);
    int64_t cost = 0;
    for (int ci = 0; ci < NCLUE; ci++) {
        int s = clue_cells[ci];
        if (grid[s] != 0) { cost += clue[s]; continue; }
        if (seen[s]) continue;
        seen[s] = 1; stack_[0] = s;
        int top = 1; int64_t size = 0, m = 0;
        while (top > 0) {
            int c = stack_[--top];
            size++;
            if (clue[c]) found[m++] = clue[c];
            for (int d = 0; d < 4; d++) {
                int x = nbr[c][d];
                if (x >= 0 && grid[x] == 0 && !seen[x]) { seen[x] = 1; stack_[top++] = x; }
            }
        }
        for (int64_t i = 0; i < m; i++) cost += llabs(size - found[i]);
        cost += m * (m - 1) / 2;
    }
    int64_t parts = 0;
    for (int s = 0; s < N; s++) {
        if (grid[s] != 1 || seen[s]) continue;
        parts++; seen[s] = 1; stack_[0] = s;
        int top = 1;
        while (top > 0) {
            int c = stack_[--top];
            for (int d = 0; d < 4; d++) {
                int x = nbr[c][d];
                if (x >= 0 && grid[x] == 1 && !seen[x]) { seen[x] = 1; stack_[top++] = x; }
            }
        }
    }
    if (parts > 1) cost += parts - 1;
    for (int b = 0; b < NBLK; b++)
        if (grid[blocks[b][0]] + grid[blocks[b][1]] + grid[blocks[b][2]] + grid[blocks[b][3]] == 4) cost++;
    return cost;
}

static void run(uint64_t st, double t0, double alpha, double t_min, int64_t max_steps,
                int64_t *o_steps, int64_t *o_reheats, int64_t *o_cost) {
    memcpy(pos, free_cells, sizeof(int) * (size_t)NFREE);
    for (int j = NFREE - 1; j > 0; j--) {            /* Fisher-Yates, as shuffle_prefix */
        uint64_t bits = next_u64(&st);
        int r = (int)below32(bits >> 32, (uint64_t)(j + 1));
        int t = pos[j]; pos[j] = pos[r]; pos[r] = t;
    }
    int nw = NWF, nb = NFREE - NWF;
    for (int c = 0; c < N; c++) { grid[c] = 1; last[c] = 0; }
    for (int i = 0; i < NCLUE; i++) { grid[clue_cells[i]] = 0; last[clue_cells[i]] = -1; }
    for (int i = 0; i < nw; i++) grid[pos[i]] = 0;
    int64_t cost = grid_cost(), steps = 0, reheats = 0;
    double t = t0;
    if (nw > 0 && nb > 0) {
        while (cost > 0 && steps < max_steps) {
            steps++;
            uint64_t r = next_u64(&st);
            int64_t i = below32(r >> 32, (uint64_t)nw);
            int64_t j = nw + below32(r & 0xFFFFFFFFULL, (uint64_t)nb);
            int a = pos[i], b = pos[j];
            grid[a] = 1; grid[b] = 0;
            int64_t nc = grid_cost(), delta = nc - cost;
            int accept = delta <= 0;
            if (!accept) { r = next_u64(&st); accept = unit_float(r) < exp(-delta / t); }
            if (accept) { pos[i] = b; pos[j] = a; cost = nc; last[a] = steps; last[b] = steps; }
            else { grid[a] = 0; grid[b] = 1; }
            t *= alpha;
            if (t < t_min) { t = t0; reheats++; }
        }
    }
    *o_steps = steps; *o_reheats = reheats; *o_cost = cost;
}

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: nurikabe_sa_ref PUZZLE T0 ALPHA T_MIN MAX_STEPS < seeds\n"); return 2; }
    setup(argv[1]);
    double t0 = atof(argv[2]), alpha = atof(argv[3]), t_min = atof(argv[4]);
    int64_t max_steps = atoll(argv[5]);
    static uint64_t seeds[100000]; int n = 0;
    while (n < 100000 && scanf("%llu", (unsigned long long *)&seeds[n]) == 1) n++;
    static int64_t o_steps[100000], o_reheats[100000], o_cost[100000];
    static uint64_t o_sum[100000];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int k = 0; k < n; k++) {
        run(seeds[k], t0, alpha, t_min, max_steps, &o_steps[k], &o_reheats[k], &o_cost[k]);
        uint64_t sum = 0;
        for (int c = 0; c < N; c++) sum = sum * 1000003ULL + (uint64_t)grid[c] * 131ULL + (uint64_t)(last[c] + 1);
        o_sum[k] = sum;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    for (int k = 0; k < n; k++)
        printf("%lld %lld %lld %llu\n", (long long)o_steps[k], (long long)o_reheats[k],
               (long long)o_cost[k], (unsigned long long)o_sum[k]);
    printf("seconds %.6f\n", (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec));
    return 0;
}
