/* Plain C reference of fairgrid's uniqueness check (bench only; see bench/backtrack_throughput.py).
 *
 * The same depth-first search as fairgrid.solvers.backtracking.count_kernel: bitmask
 * candidates, at every node the empty cell with the fewest candidates (first on ties,
 * stop scanning at one), its candidates in ascending order, stop at LIMIT solutions.
 * The benchmark checks that both sides visit the same number of nodes.
 *
 * usage: bt_ref LIMIT < puzzles (one 81-character line each, '.' or '0' blanks)
 * prints: puzzles solutions_total nodes_total seconds
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXP 100000

static int popcount64(uint64_t x) {  /* SWAR, as the numba kernel */
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

static int count(int *grid, int order, int limit, long long *nodes) {
    int size = order * order, ncells = size * size, n = 0, cnt = 0, depth = 0, choose = 1;
    uint64_t full = ((1ULL << (size + 1)) - 1) ^ 1ULL;
    uint64_t rowm[25] = {0}, colm[25] = {0}, boxm[25] = {0}, cand[626];
    int empties[625];
    for (int c = 0; c < ncells; c++) {
        int d = grid[c], r = c / size, k = c % size;
        if (!d) { empties[n++] = c; continue; }
        uint64_t bit = 1ULL << d;
        rowm[r] |= bit; colm[k] |= bit; boxm[(r / order) * order + k / order] |= bit;
    }
    for (;;) {
        if (choose) {
            if (depth == n) {
                if (++cnt >= limit) break;
                choose = 0;
                if (--depth < 0) break;
                int c = empties[depth], r = c / size, k = c % size;
                uint64_t bit = ~(1ULL << grid[c]);
                rowm[r] &= bit; colm[k] &= bit; boxm[(r / order) * order + k / order] &= bit;
                grid[c] = 0;
                continue;
            }
            int best = depth, bestc = 64; uint64_t bestm = 0;
            for (int i = depth; i < n; i++) {
                int c = empties[i], r = c / size, k = c % size;
                uint64_t m = full & ~(rowm[r] | colm[k] | boxm[(r / order) * order + k / order]);
                int pc = popcount64(m);
                if (pc < bestc) { bestc = pc; best = i; bestm = m; if (pc <= 1) break; }
            }
            int t = empties[depth]; empties[depth] = empties[best]; empties[best] = t;
            cand[depth] = bestm;
        }
        uint64_t m = cand[depth];
        int c = empties[depth], r = c / size, k = c % size, b = (r / order) * order + k / order;
        if (!m) {
            if (--depth < 0) break;
            c = empties[depth]; r = c / size; k = c % size;
            uint64_t bit = ~(1ULL << grid[c]);
            rowm[r] &= bit; colm[k] &= bit; boxm[(r / order) * order + k / order] &= bit;
            grid[c] = 0;
            choose = 0;
            continue;
        }
        uint64_t bit = m & (~m + 1);
        cand[depth] = m ^ bit;
        grid[c] = popcount64(bit - 1);
        rowm[r] |= bit; colm[k] |= bit; boxm[b] |= bit;
        (*nodes)++;
        depth++;
        choose = 1;
    }
    for (int i = 0; i < n; i++) grid[empties[i]] = 0;
    return cnt;
}

static int puzzles[MAXP][81];

int main(int argc, char **argv) {
    int limit = argc > 1 ? atoi(argv[1]) : 2;
    char line[512]; int np = 0;
    while (np < MAXP && fgets(line, sizeof line, stdin)) {
        if (strlen(line) < 81) continue;
        for (int c = 0; c < 81; c++) puzzles[np][c] = (line[c] >= '1' && line[c] <= '9') ? line[c] - '0' : 0;
        np++;
    }
    long long nodes = 0, sols = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int p = 0; p < np; p++) sols += count(puzzles[p], 3, limit, &nodes);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%d %lld %lld %.6f\n", np, sols, nodes, (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
    return 0;
}
