# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The solver's search compiled to C: the same search as ``_Search.run`` in ``solver.py``, step for step.

``solver.py`` is the reference. This module mirrors its ``run`` and ``bound`` on C arrays, with the two tables
(``memo``, ``bound_cache``) as open-addressing hash tables of 64-bit keys instead of dicts, so it explores the same
positions in the same order and returns the same values, lines and position counts; the tests check that it does.
``Search`` refuses (ValueError) layouts whose keys do not fit in 63 bits; ``solver.py`` then runs its own search.

The search does not raise: ``run`` returns ``(value, status)``, and ``solver.py`` turns a status into its
exceptions (budget used up, search stopped).
"""

from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

cdef enum:
    MAXCOL = 20
    MAXH = 21
    MAXSTOCK = 210
    INF = 1 << 30
    ABORT = -2
    # The status ``run`` returns beside its value (``solver.py`` has the same numbers).
    STATUS_DONE = 0
    STATUS_BUDGET = 1
    STATUS_STOPPED = 2


cdef struct Table:
    uint64_t *keys  # key + 1; 0 marks an empty slot
    int32_t *vals
    uint64_t mask
    int shift
    uint64_t used


cdef void table_free(Table *tab) noexcept:
    free(tab.keys)
    free(tab.vals)
    tab.keys = NULL
    tab.vals = NULL


cdef int table_init(Table *tab, int bits) except -1:
    cdef uint64_t size = (<uint64_t>1) << bits
    tab.keys = <uint64_t *>calloc(size, sizeof(uint64_t))
    tab.vals = <int32_t *>malloc(size * sizeof(int32_t))
    if tab.keys == NULL or tab.vals == NULL:
        table_free(tab)
        raise MemoryError()
    tab.mask = size - 1
    tab.shift = 64 - bits
    tab.used = 0
    return 0


cdef inline uint64_t slot_of(Table *tab, uint64_t stored) noexcept:
    return (stored * <uint64_t>0x9E3779B97F4A7C15) >> tab.shift


cdef inline uint64_t probe(Table *tab, uint64_t stored) noexcept:
    """The slot holding ``stored`` (a key + 1), or the empty slot where it would go."""
    cdef uint64_t i = slot_of(tab, stored)
    while tab.keys[i] != stored and tab.keys[i] != 0:
        i = (i + 1) & tab.mask
    return i


cdef inline int table_get(Table *tab, uint64_t key, int32_t *out) noexcept:
    cdef uint64_t i = probe(tab, key + 1)
    if tab.keys[i] == 0:
        return 0
    out[0] = tab.vals[i]
    return 1


cdef int table_grow(Table *tab) except -1:
    cdef Table old = tab[0]
    cdef uint64_t j, i, k
    try:
        table_init(tab, 64 - old.shift + 1)
    except MemoryError:
        table_free(tab)
        tab[0] = old  # the table as it was: still usable, and freed with the search
        raise
    for j in range(old.mask + 1):
        k = old.keys[j]
        if k:
            i = probe(tab, k)
            tab.keys[i] = k
            tab.vals[i] = old.vals[j]
            tab.used += 1
    table_free(&old)
    return 0


cdef inline int table_set(Table *tab, uint64_t key, int32_t val) except -1:
    cdef uint64_t stored = key + 1
    cdef uint64_t i = probe(tab, stored)
    if tab.keys[i] == 0:
        tab.keys[i] = stored
        tab.used += 1
    tab.vals[i] = val
    if tab.used * 2 > tab.mask:
        table_grow(tab)
    return 0


cdef class Search:
    """One position's search (see ``_Search`` in ``solver.py``): built once, ``run`` as often as needed."""

    cdef int ncol, nstock, top0, stuck_only, kings_sink, cyclic, hbits, tbits, cbits
    cdef int colranks[MAXCOL][MAXH]
    cdef int heights0[MAXCOL]
    cdef int heights[MAXCOL]
    cdef int stockranks[MAXSTOCK]
    cdef int fitmask[14]
    cdef int colcnt[15]
    cdef int frontcols[15]
    cdef int present
    cdef int stock_rows[MAXSTOCK + 1][15]
    cdef int open_mask[MAXSTOCK + 1]
    cdef int open_count[MAXSTOCK + 1]
    cdef int down_ok[15]
    cdef int up_ok[15]
    cdef int down_mask, up_mask, wrap_mask_a, wrap_mask_k
    cdef uint64_t units[MAXCOL]
    cdef uint64_t cunits[15]
    cdef uint64_t cntkey
    cdef Table memo
    cdef Table bound_cache
    cdef int path[MAXCOL * MAXH + MAXSTOCK + 2]
    cdef int depth
    cdef int k, floor, status
    cdef public int best_left
    cdef public list best_path
    cdef public long long positions
    cdef long long budget, stop_every, limit
    cdef object stop

    def __cinit__(self):
        table_init(&self.memo, 12)
        table_init(&self.bound_cache, 10)

    def __dealloc__(self):
        table_free(&self.memo)
        table_free(&self.bound_cache)

    def __init__(
        self,
        list colranks,
        list stockranks,
        list heights,
        int top0,
        list fitmask,
        bint stuck_only,
        long long budget,
        long long stop_every,
        object stop,
    ):
        cdef int c, h, r, i, q
        self.ncol = len(colranks)
        self.nstock = len(stockranks)
        if self.ncol > MAXCOL or self.nstock >= MAXSTOCK:
            raise ValueError("layout too large for the compiled search")
        for c in range(self.ncol):
            if len(colranks[c]) > MAXH:
                raise ValueError("layout too large for the compiled search")
            for h in range(len(colranks[c])):
                self.colranks[c][h] = colranks[c][h]
            self.heights0[c] = heights[c]
        for i in range(self.nstock):
            self.stockranks[i] = stockranks[i]
        for r in range(14):
            self.fitmask[r] = fitmask[r]
        self.top0 = top0
        self.stuck_only = stuck_only
        self.budget = budget
        self.stop_every = stop_every
        self.stop = stop
        self.positions = 0
        self.best_left = INF
        self.best_path = []

        cdef int maxh = 1
        for c in range(self.ncol):
            if self.heights0[c] > maxh:
                maxh = self.heights0[c]
        self.hbits = (<object>maxh).bit_length()
        self.tbits = (<object>max(self.nstock, 1)).bit_length()
        for c in range(self.ncol):
            self.units[c] = (<uint64_t>1) << (self.hbits * c)
        cdef int colcnt[15]
        memset(colcnt, 0, sizeof(colcnt))
        for c in range(self.ncol):
            for h in range(1, self.heights0[c] + 1):
                colcnt[self.colranks[c][h]] += 1
        cdef int maxcnt = 1
        for r in range(15):
            if colcnt[r] > maxcnt:
                maxcnt = colcnt[r]
        self.cbits = (<object>maxcnt).bit_length()
        if max(self.hbits * self.ncol, self.cbits * 13) + self.tbits + 4 > 63:
            raise ValueError("the layout's positions do not fit in 63 bits")
        # The counts of ranks 1 to 13 packed, rank r at bit cbits * (r - 1).
        for r in range(15):
            self.cunits[r] = (<uint64_t>1) << (self.cbits * (r - 1)) if 1 <= r <= 13 else 0

        memset(self.stock_rows[self.nstock], 0, sizeof(int) * 15)
        for i in range(self.nstock - 1, -1, -1):
            for r in range(15):
                self.stock_rows[i][r] = self.stock_rows[i + 1][r]
            self.stock_rows[i][self.stockranks[i]] += 1
        for i in range(self.nstock + 1):
            self.open_mask[i] = 0
            self.open_count[i] = 0
            for r in range(1, 14):
                if self.stock_rows[i][r] and self.fitmask[r]:
                    self.open_mask[i] |= 1 << r
                    self.open_count[i] += self.stock_rows[i][r]
        self.kings_sink = self.fitmask[13] == 0
        memset(self.down_ok, 0, sizeof(self.down_ok))
        memset(self.up_ok, 0, sizeof(self.up_ok))
        self.down_mask = 0
        self.up_mask = 0
        for q in range(1, 14):
            self.down_ok[q] = q > 1 and self._fits(q, q - 1)
            self.up_ok[q] = q < 13 and self._fits(q, q + 1)
            if self.down_ok[q]:
                self.down_mask |= 1 << q
            if self.up_ok[q]:
                self.up_mask |= 1 << q
        cdef int ace_on_king = self._fits(1, 13)
        cdef int king_on_ace = self._fits(13, 1)
        self.cyclic = ace_on_king and king_on_ace
        for q in range(2, 13):
            if not (self.down_ok[q] and self.up_ok[q]):
                self.cyclic = 0
        self.wrap_mask_a = 2 if ace_on_king else 0
        self.wrap_mask_k = (1 << 13) if king_on_ace else 0

    cdef inline int _fits(self, int rank, int top) noexcept:
        return (self.fitmask[top] >> rank) & 1

    def run(self, int k, int floor):
        """``_Search.run`` of ``solver.py``: returns ``(value, status)``: 0 done, 1 budget used up, 2 stopped."""
        cdef int c, h, r
        self.k = k
        self.floor = floor
        self.status = STATUS_DONE
        self.depth = 0
        memset(self.colcnt, 0, sizeof(self.colcnt))
        memset(self.frontcols, 0, sizeof(self.frontcols))
        for c in range(self.ncol):
            self.heights[c] = self.heights0[c]
            for h in range(1, self.heights[c] + 1):
                self.colcnt[self.colranks[c][h]] += 1
            if self.heights[c]:
                self.frontcols[self.colranks[c][self.heights[c]]] |= 1 << c
        self.present = 0
        self.cntkey = 0
        for r in range(1, 14):
            if self.colcnt[r]:
                self.present |= 1 << r
        for r in range(1, 14):
            self.cntkey += self.colcnt[r] * self.cunits[r]
        self.limit = min(self.budget, self.positions + self.stop_every)
        cdef uint64_t hkey0 = 0
        cdef int left0 = 0
        for c in range(self.ncol):
            hkey0 |= (<uint64_t>self.heights[c]) << (self.hbits * c)
            left0 += self.heights[c]
        cdef int got = self.dfs(self.top0, 0, hkey0, left0)
        if got == ABORT:
            return ABORT, self.status
        return got, STATUS_DONE

    cdef int _keep_line(self, int left) except -1:
        self.best_left = left
        self.best_path = [self.path[i] for i in range(self.depth)]
        return 0

    cdef int dfs(self, int top, int t, uint64_t hkey, int left) except? -3:
        cdef int ctop, lb, value, got, moved, cols, bit, c, h, r, n, q
        cdef int32_t known
        cdef uint64_t key, bkey
        if not left:
            self._keep_line(0)
            return -1
        ctop = top if (self.fitmask[top] & self.present) else 0
        key = (((hkey << self.tbits) | <uint64_t>t) << 4) | <uint64_t>ctop
        if table_get(&self.memo, key, &known) and known >= self.k:
            return known
        self.positions += 1
        if self.positions > self.limit:
            if self.positions > self.budget:
                self.status = STATUS_BUDGET
                return ABORT
            if self.stop():
                self.status = STATUS_STOPPED
                return ABORT
            self.limit = min(self.budget, self.positions + self.stop_every)
        bkey = (((self.cntkey << self.tbits) | <uint64_t>t) << 4) | <uint64_t>ctop
        if not table_get(&self.bound_cache, bkey, &known):
            known = self.bound(t, ctop, bkey)
        lb = known
        if lb >= self.k:
            table_set(&self.memo, key, lb)
            return lb
        value = INF
        cols = 0
        if ctop:
            for q in range(1, 14):
                if (self.fitmask[ctop] >> q) & 1:
                    cols |= self.frontcols[q]
        moved = cols != 0
        while cols:
            bit = cols & -cols
            cols ^= bit
            c = 0
            while not (bit >> c) & 1:
                c += 1
            h = self.heights[c]
            r = self.colranks[c][h]
            self.heights[c] = h - 1
            self.frontcols[r] ^= bit
            if h > 1:
                self.frontcols[self.colranks[c][h - 1]] |= bit
            n = self.colcnt[r] - 1
            self.colcnt[r] = n
            if not n:
                self.present ^= 1 << r
            self.cntkey -= self.cunits[r]
            self.path[self.depth] = c
            self.depth += 1
            got = self.dfs(r, t, hkey - self.units[c], left - 1)
            self.depth -= 1
            if got == ABORT:
                return ABORT
            if not n:
                self.present |= 1 << r
            self.colcnt[r] = n + 1
            self.cntkey += self.cunits[r]
            if h > 1:
                self.frontcols[self.colranks[c][h - 1]] ^= bit
            self.frontcols[r] |= bit
            self.heights[c] = h
            if got < 0:
                return -1
            if got < value:
                value = got
        if t < self.nstock and not (moved and self.stuck_only):
            self.path[self.depth] = -1
            self.depth += 1
            got = self.dfs(self.stockranks[t], t + 1, hkey, left)
            self.depth -= 1
            if got == ABORT:
                return ABORT
            if got < 0:
                return -1
            if got < value:
                value = got
        elif not moved:
            # The game is over here.
            if left < self.best_left:
                self._keep_line(left)
            if left < self.k:
                if left <= self.floor:
                    return -1
                self.k = left
            value = left
        if value < lb:
            value = lb
        table_set(&self.memo, key, value)
        return value

    cdef int bound(self, int t, int ctop, uint64_t bkey) except -1:
        cdef int cnt[15]
        cdef int st[15]
        cdef int cut[MAXCOL]
        cdef int caps[26]
        cdef int pres = self.present
        cdef int stuck = 0
        cdef int cacheable = 1
        cdef int starters, reach, src, nxt, dead, c, h, i, r, q
        cdef int kings_over, unmatched, r_prev, r_cur, s_next, d, u
        cdef int low, z, matched, carry, cap, j, total
        for r in range(15):
            cnt[r] = self.colcnt[r]
            st[r] = self.stock_rows[t][r]
        if ctop:
            st[ctop] += 1
        memset(cut, 0, sizeof(cut))
        starters = self.open_mask[t] | ((1 << ctop) if ctop else 0)
        while True:
            reach = 0
            src = starters
            while src:
                nxt = (((src << 1) & self.down_mask) | ((src >> 1) & self.up_mask)) & pres & ~reach
                if self.wrap_mask_a | self.wrap_mask_k:
                    nxt |= (((src >> 12) & self.wrap_mask_a) | ((src << 12) & self.wrap_mask_k)) & pres & ~reach
                reach |= nxt
                src = nxt
            dead = pres & ~reach
            if not dead:
                break
            cacheable = 0
            for c in range(self.ncol):
                for h in range(self.heights[c], cut[c], -1):
                    if (dead >> self.colranks[c][h]) & 1:
                        stuck += h - cut[c]
                        for i in range(cut[c] + 1, h + 1):
                            cnt[self.colranks[c][i]] -= 1
                        cut[c] = h
                        break
            pres = 0
            for r in range(1, 14):
                if cnt[r]:
                    pres |= 1 << r
        kings_over = 0
        if self.kings_sink:
            kings_over = cnt[13] - self.open_count[t] - (1 if ctop else 0)
        unmatched = 0
        r_prev = 0
        r_cur = cnt[1] + st[1]
        for q in range(1, 14):
            s_next = cnt[q + 1] + st[q + 1]
            d = cnt[q]
            if d:
                if r_prev and self.down_ok[q]:
                    d -= r_prev if r_prev < d else d
                if d and s_next and self.up_ok[q]:
                    u = s_next if s_next < d else d
                    d -= u
                    s_next -= u
                unmatched += d
            r_prev = r_cur
            r_cur = s_next
        if unmatched and self.cyclic:
            for j in range(26):
                r = j % 13 + 1
                if (j % 13) % 2 == j // 13:
                    caps[j] = cnt[r]
                else:
                    caps[j] = cnt[r] + st[r]
            low = caps[0]
            z = 0
            for j in range(1, 26):
                if caps[j] < low:
                    low = caps[j]
                    z = j
            matched = low
            carry = 0
            for j in range(z + 1, z + 26):
                cap = caps[j % 26]
                if carry:
                    u = carry if carry < cap else cap
                    matched += u
                    cap -= u
                carry = cap
            total = 0
            for r in range(15):
                total += cnt[r]
            unmatched = total - matched
            if unmatched < 0:
                unmatched = 0
        if kings_over > unmatched:
            unmatched = kings_over
        if cacheable:
            table_set(&self.bound_cache, bkey, unmatched)
        return stuck + unmatched
