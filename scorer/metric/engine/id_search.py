# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Rules 2-5 on token ids: the compiled engine's helper for the penalty mode.

:mod:`scorer.metric.engine.alignment` defines which alignment is scored: forced links, then a
branch and bound over the other candidate positions. This module runs the same steps, in the same
order, on another representation: token ids by position and flat arrays of 64-bit integers
instead of dictionaries, tuples and sorted lists. It is called by ``id_counts.KeyTable.aligned``
with what that class already knows (each position's type id, the types sorted, the links between
the free types and rule 1's counts), for pairs whose rule-1 counts ``id_counts`` settles. Where the
search finds no alignment within its budget it says so (:data:`CUT`), and the definition's
fallback answers; where costs might not fit 64 bits (very long texts) it answers None, and the
definition aligns the pair.

It is plain Python, run as such by the tests, which check it against the definition on every
small pair of texts (``tests/test_id_search.py``); ``setup.py`` compiles this same file, typed by
``id_search.pxd`` beside it (Cython's pure-Python mode), and CI checks that both engines write
byte-identical outputs on the WMT21 benchmark.
"""
from __future__ import annotations

from array import array
from typing import MutableSequence

Ints = MutableSequence[int]  # an array('q') or array('i') (a typed memoryview of one when compiled)

UNSET = -2    # no position, no link (below every position and every position minus one)
NONE = -1     # a table entry where rule 1 can no longer be met (costs are never negative)
#: Above this many (candidate, reference) position pairs the definition aligns the pair.
MAX_POSITION_PAIRS = 1 << 20
#: What :meth:`IdSearch.align` returns when the search found no alignment within its budget: the answer is
#: then ``alignment.fallback_alignment``, as in ``alignment.align``.
CUT = (-1, -1, False)


def _count(work: Ints, lo: int, hi: int, x: int) -> int:
    """How many of the sorted ``work[lo:hi]`` equal ``x``."""
    a, b = lo, hi
    while a < b:
        mid = (a + b) // 2
        if work[mid] < x:
            a = mid + 1
        else:
            b = mid
    n = 0
    while a + n < hi and work[a + n] == x:
        n += 1
    return n


def _nth(order: Ints, lo: int, hi: int, x: int, k: int) -> int:
    """The index (from ``lo``) of the ``k``-th (0-based) occurrence of ``x`` in ``order[lo:hi]``, or -1."""
    for p in range(lo, hi):
        if order[p] == x:
            if k == 0:
                return p - lo
            k -= 1
    return -1


def _rank(order: Ints, i: int) -> int:
    """How many positions before ``i`` hold the type at ``i``."""
    k = 0
    x = order[i]
    for p in range(i):
        if order[p] == x:
            k += 1
    return k


class IdSearch:
    """Scratch for the search, grown as needed and kept from pair to pair."""

    def __init__(self) -> None:
        self.mem = array("q", bytes(8 * 4096))

    def _room(self, n: int) -> Ints:
        """The scratch, grown to at least ``n`` items (what it holds is kept)."""
        if len(self.mem) < n:
            grown = array("q", self.mem)
            grown.frombytes(bytes(8 * (max(n, 2 * len(self.mem)) - len(self.mem))))
            self.mem = grown
        return self.mem

    def align(self, order: Ints, work: Ints, nc: int, nr: int, nfc: int, nfr: int, n_links: int,
              target: list[int], budget: int) -> tuple[int, int, bool] | None:
        """(links, chunks, exact) of the alignment of rules 1-5; :data:`CUT` when the search found none within
        the budget; None where the definition must answer.

        ``order[:nc]`` and ``order[nc:nc + nr]``: the candidate's and the reference's type ids in text
        order; ``work`` as ``id_counts`` leaves it: both sorted at the front, the free types and their
        counts after them, then ``n_links`` links (candidate free index, reference free index, stage
        after the exact one) from ``3 * (nc + nr)``. ``target``: rule 1's links per stage, exact first.
        """
        t, r = nc, nr
        if t * r > MAX_POSITION_PAIRS:
            return None
        n_stages = len(target)
        w1 = t * r + 1
        w2 = (min(t, r) + 1) * w1
        fc_id = nc + nr
        fr_id = 3 * nc + nr
        lk = 3 * (nc + nr)
        # the layout of the scratch (every region one int64 per item)
        fj = 0                                 # forced reference position of each candidate position
        fs = fj + t                            # its stage
        is_group = fs + t                      # 1 + group of a partly exact type's position, else 0
        deg_c = is_group + t                   # links at each free candidate type
        deg_r = deg_c + nfc                    # links at each free reference type
        partners = deg_r + nfr                 # (type, stage) of the option partners of one position
        dpos = partners + 2 * nfr + 2          # candidate position of each decision
        opt_at = dpos + t                      # where each decision's options begin, and their number
        opt_n = opt_at + t
        opts = opt_n + t                       # (reference position, stage, static cost) of every option
        mem = self._room(opts + 3 * t * r + 8)
        for k in range(n_links):
            mem[deg_c + work[lk + 3 * k]] = 0
            mem[deg_r + work[lk + 3 * k + 1]] = 0
        for k in range(n_links):
            mem[deg_c + work[lk + 3 * k]] += 1
            mem[deg_r + work[lk + 3 * k + 1]] += 1
        n = 0                                  # decisions: the positions with options
        n_opts = 0
        n_forced = 0
        for i in range(t):
            x = order[i]
            mem[fj + i] = UNSET
            mem[fs + i] = UNSET
            mem[is_group + i] = 0
            cx = _count(work, 0, nc, x)
            rx = _count(work, nc, nc + nr, x)
            n_partners = 0
            if rx:
                if cx == rx:                   # point 1: as often in both texts
                    mem[fj + i] = _nth(order, nc, nc + nr, x, _rank(order, i))
                    mem[fs + i] = 0
                    n_forced += 1
                    continue
                mem[is_group + i] = 1
            for k in range(n_links):
                if work[fc_id + work[lk + 3 * k]] != x:
                    continue
                b = work[fr_id + work[lk + 3 * k + 1]]
                s = work[lk + 3 * k + 2] + 1
                if (rx == 0 and mem[deg_c + work[lk + 3 * k]] == 1 and mem[deg_r + work[lk + 3 * k + 1]] == 1
                        and _count(work, 0, nc, b) == 0 and cx == _count(work, nc, nc + nr, b)):
                    mem[fj + i] = _nth(order, nc, nc + nr, b, _rank(order, i))   # one link, equal counts
                    mem[fs + i] = s
                    n_forced += 1
                    break
                mem[partners + 2 * n_partners] = b
                mem[partners + 2 * n_partners + 1] = s
                n_partners += 1
            if mem[fj + i] != UNSET or (n_partners == 0 and not mem[is_group + i]):
                continue
            mem[dpos + n] = i
            mem[opt_at + n] = opts + 3 * n_opts
            start = n_opts
            for j in range(nr):                # by reference position: at most one stage links i and j
                y = order[nc + j]
                s = -1
                if mem[is_group + i] and y == x:
                    s = 0
                else:
                    for k in range(n_partners):
                        if mem[partners + 2 * k] == y:
                            s = mem[partners + 2 * k + 1]
                            break
                if s >= 0:
                    mem[opts + 3 * n_opts] = j
                    mem[opts + 3 * n_opts + 1] = s
                    n_opts += 1
            mem[opt_n + n] = n_opts - start
            n += 1
        if n == 0:
            return n_forced, self._chunks(t, fj, -1, -1, -1), True
        if (min(t, r) + 1) * w2 > (1 << 62) // (t * r + 2):
            return None                        # costs might not fit 64 bits: very long texts
        return self._search(order, t, r, n, n_stages, target, w1, w2, fj, fs, is_group, dpos, opt_at, opt_n,
                            opts + 3 * n_opts, budget)

    def _chunks(self, t: int, fj: int, chosen: int, dpos: int, n: int) -> int:
        """Chunks of the forced links (at ``fj``) with the chosen ones (reference position per decision at
        ``chosen``, UNSET for none; ``chosen < 0``: none)."""
        mem = self.mem
        chunks = 0
        last = UNSET                           # the reference position linked to the previous position
        d = 0
        for i in range(t):
            j = mem[fj + i]
            if chosen >= 0 and d < n and mem[dpos + d] == i:
                j = mem[chosen + d]
                d += 1
            if j != UNSET and (last == UNSET or last != j - 1):
                chunks += 1
            last = j
        return chunks

    def _search(self, order: Ints, t: int, r: int, n: int, n_stages: int, target: list[int], w1: int, w2: int,
                fj: int, fs: int, is_group: int, dpos: int, opt_at: int, opt_n: int, free: int,
                budget: int) -> tuple[int, int, bool] | None:
        """The branch and bound of ``alignment._Search`` over the ``n`` decisions."""
        mem = self._room(free + 64 * (t + r + n + n_stages) + n_stages * (n + 2) + 4 * (t * r) + 16)
        # regions after the options
        rest = free                            # links to make by the search per stage
        need = rest + n_stages                 # of those, still needed in the branch searched
        avail = need + n_stages                # avail[s * (n + 1) + d]: decisions from d on with a stage-s option
        mark = avail + n_stages * (n + 1)      # forced links by reference position, before the current one
        prefix_all = mark + r + 1              # forced links with a reference position below j
        prefix_before = prefix_all + r + 1
        group_of = prefix_before + r + 1       # per decision: its group, or -1
        group_a = group_of + n                 # per decision: its index within its group
        ref_rank = group_a + n                 # per reference position: its index within its group's
        group_q = ref_rank + r                 # per group: reference positions behind its last exact link
        table_at = group_q + n                 # per group: where its table begins, and its reference positions
        group_r = table_at + n
        at_c = group_r + n                     # the reference position linked to each candidate position
        used = at_c + t                        # reference positions taken
        tree = used + r                        # a Fenwick tree over reference positions: the chosen ones
        twin = tree + r + 1                    # last reference position chosen per (candidate, reference) type
        first_c = twin + t * r                 # per position, the first position of its type (twin keys)
        first_r = first_c + t
        chosen_j = first_r + r                 # per decision: the chosen reference position (UNSET: none)
        chosen_s = chosen_j + n
        best_j = chosen_s + n
        best_s = best_j + n
        frame = best_s + n                     # per depth: choices offset, count, next, undo record (7)
        choice_at = frame + 10 * (n + 1)       # per depth: where its choices begin
        choices = choice_at + n                # per depth: up to its options + 1 choices of 4 values
        total_choices = 0
        for d in range(n):
            total_choices += mem[opt_n + d] + 1
        mem = self._room(choices + 4 * total_choices + 8)
        at = choices
        for d in range(n):
            mem[choice_at + d] = at
            at += 4 * (mem[opt_n + d] + 1)
        for s in range(n_stages):
            mem[rest + s] = target[s]
        for i in range(t):
            if mem[fj + i] != UNSET:
                mem[rest + mem[fs + i]] -= 1
        # crossings, chunk starts and displacement of the forced links: the base cost
        for j in range(r + 1):
            mem[mark + j] = 0
        for i in range(t):
            if mem[fj + i] != UNSET:
                mem[mark + mem[fj + i]] += 1
        acc = 0
        for j in range(r):
            mem[prefix_all + j] = acc
            acc += mem[mark + j]
        mem[prefix_all + r] = acc
        for j in range(r + 1):
            mem[mark + j] = 0
        crossings = 0
        base_chunks = 0
        displacement = 0
        d = 0
        for i in range(t):
            if d < n and mem[dpos + d] == i:
                d += 1
                continue
            j = mem[fj + i]
            if j == UNSET:
                continue
            for q in range(j + 1, r):
                crossings += mem[mark + q]
            mem[mark + j] += 1
            displacement += i - j if i >= j else j - i
            decided_before = d > 0 and mem[dpos + d - 1] == i - 1
            if not decided_before and (i == 0 or mem[fj + i - 1] != j - 1):
                base_chunks += 1
        base = crossings * w2 + base_chunks * w1 + displacement
        # static costs of the options: crossings with forced links, and displacement
        for j in range(r + 1):
            mem[mark + j] = 0
        i_done = 0
        for d in range(n):
            i = mem[dpos + d]
            while i_done < i:
                if mem[fj + i_done] != UNSET:
                    mem[mark + mem[fj + i_done]] += 1
                i_done += 1
            acc = 0
            for j in range(r):
                mem[prefix_before + j] = acc
                acc += mem[mark + j]
            mem[prefix_before + r] = acc
            for o in range(mem[opt_n + d]):
                p = mem[opt_at + d] + 3 * o
                j = mem[p]
                above_before = acc - mem[prefix_before + j + 1]
                below_after = mem[prefix_all + j] - mem[prefix_before + j]
                mem[p + 2] = (above_before + below_after) * w2 + (i - j if i >= j else j - i)
        # avail
        for s in range(n_stages):
            mem[avail + s * (n + 1) + n] = 0
        for d in range(n - 1, -1, -1):
            for s in range(n_stages):
                here = 0
                for o in range(mem[opt_n + d]):
                    if mem[mem[opt_at + d] + 3 * o + 1] == s:
                        here = 1
                        break
                mem[avail + s * (n + 1) + d] = mem[avail + s * (n + 1) + d + 1] + here
        # groups: each partly exact type's positions, its tables
        n_groups = 0
        for d in range(n):
            mem[group_of + d] = -1
        for j in range(r):
            mem[ref_rank + j] = -1
        start_bound = 0
        table_end = choices + 4 * total_choices
        for d in range(n):
            i = mem[dpos + d]
            if not mem[is_group + i] or mem[group_of + d] >= 0:
                continue
            g = n_groups
            n_groups += 1
            x = order[i]
            c = 0
            for e in range(d, n):
                if order[mem[dpos + e]] == x and mem[is_group + mem[dpos + e]]:
                    mem[group_of + e] = g
                    mem[group_a + e] = c
                    c += 1
            rr = 0
            for j in range(r):
                if order[t + j] == x:
                    mem[ref_rank + j] = rr
                    rr += 1
            mem[group_r + g] = rr
            mem[table_at + g] = table_end
            mem = self._room(table_end + (c + 1) * (rr + 1) + c * rr + 8)
            tab = table_end
            table_end += (c + 1) * (rr + 1)
            costs = table_end                  # costs[a * rr + q]: the static cost of the a-th position's q-th link
            for e in range(d, n):
                if mem[group_of + e] == g:
                    q = 0
                    for o in range(mem[opt_n + e]):
                        p = mem[opt_at + e] + 3 * o
                        if mem[p + 1] == 0:    # its exact options are its type's reference positions, in order
                            mem[costs + mem[group_a + e] * rr + q] = mem[p + 2]
                            q += 1
            for a in range(c, -1, -1):
                for q in range(rr, -1, -1):
                    cell = tab + a * (rr + 1) + q
                    if (c >= rr and q == rr) or (c < rr and a == c):
                        mem[cell] = 0
                        continue
                    mem[cell] = NONE
                    if (c >= rr and c - a < rr - q) or (c < rr and rr - q < c - a):
                        continue
                    skip = mem[tab + (a + 1) * (rr + 1) + q] if c >= rr else mem[tab + a * (rr + 1) + q + 1]
                    link = mem[tab + (a + 1) * (rr + 1) + q + 1]
                    best = NONE
                    if link != NONE:
                        best = mem[costs + a * rr + q] + link
                    if skip != NONE and (best == NONE or skip < best):
                        best = skip
                    mem[cell] = best
            if mem[tab] == NONE:
                return None                    # never (rule 1 ensures it); the definition raises
            start_bound += mem[tab]
        state = _State(n, n_stages, w1, w2, base, start_bound, budget, n_groups)
        for i in range(t):
            mem[first_c + i] = _first(order, 0, i)
        for j in range(r):
            mem[first_r + j] = _first(order, t, j)
        regions = _Regions(rest, need, avail, group_of, group_a, ref_rank, group_q, table_at, group_r, at_c, used, tree,
                           twin, first_c, first_r, chosen_j, chosen_s, best_j, best_s, frame, choice_at, dpos, opt_at,
                           opt_n, fj)
        greedy = self._dfs(t, r, state, regions, True)
        if greedy < 0:
            return CUT                         # no alignment before the budget ran out: the definition's fallback
        if not (state.lex_first and state.best_cost == base + start_bound):
            state.best_is_lex = False
            self._dfs(t, r, state, regions, False)
        links = 0
        for i in range(t):
            if mem[fj + i] != UNSET:
                links += 1
        for d in range(n):
            if mem[best_j + d] != UNSET:
                links += 1
        return links, self._chunks(t, fj, best_j, dpos, n), state.exact

    def _dfs(self, t: int, r: int, state: _State, g: _Regions, greedy: bool) -> int:
        """``alignment._Search._dfs``: the greedy dive (``greedy``), or the lexicographic search from the
        best alignment so far. Returns the cost found (the dive's), or -1 when none was."""
        mem = self.mem
        n = state.n
        self._fresh(t, r, state, g)
        cost = state.base
        bound_left = state.start_bound
        depth = 0
        self._choices(t, r, state, g, greedy, 0, cost, bound_left)
        while depth >= 0:
            d = depth
            fr = g.frame + 10 * d
            if mem[fr + 3]:                    # undo the choice made at this depth
                inc, j, s, old, delta, old_q = (mem[fr + 4], mem[fr + 5], mem[fr + 6], mem[fr + 7], mem[fr + 8],
                                                mem[fr + 9])
                cost -= inc
                bound_left -= delta
                grp = mem[g.group_of + d]
                if grp >= 0:
                    mem[g.group_q + grp] = old_q
                if j >= 0:
                    i = mem[g.dpos + d]
                    mem[g.used + j] = 0
                    _tree_add(mem, g.tree, r, j, -1)
                    mem[g.need + s] += 1
                    mem[g.twin + mem[g.first_c + i] * r + mem[g.first_r + j]] = old
                    mem[g.at_c + i] = UNSET
                mem[g.chosen_j + d] = UNSET
                mem[fr + 3] = 0
            at, count, k = mem[fr], mem[fr + 1], mem[fr + 2]
            has_limit = state.has_best
            limit = state.best_cost
            while k < count:
                if not has_limit or cost + bound_left + mem[at + 4 * k] + mem[at + 4 * k + 3] <= limit:
                    break
                k += 1
            if k == count:
                depth -= 1
                continue
            mem[fr + 2] = k + 1
            inc, j, s, delta = mem[at + 4 * k], mem[at + 4 * k + 1], mem[at + 4 * k + 2], mem[at + 4 * k + 3]
            if greedy and state.lex_first:
                if j < 0 and count > 1:
                    state.lex_first = False
                else:
                    for o in range(count):
                        if 0 <= mem[at + 4 * o + 1] < j:
                            state.lex_first = False
                            break
            state.nodes += 1
            if state.nodes > state.budget:
                state.exact = False
                return state.best_cost if state.has_best else -1
            old = -1
            i = mem[g.dpos + d]
            if j >= 0:
                mem[g.used + j] = 1
                _tree_add(mem, g.tree, r, j, 1)
                mem[g.need + s] -= 1
                key = g.twin + mem[g.first_c + i] * r + mem[g.first_r + j]
                old = mem[key]
                mem[key] = j
                mem[g.at_c + i] = j
                mem[g.chosen_j + d] = j
                mem[g.chosen_s + d] = s
            old_q = 0
            grp = mem[g.group_of + d]
            if grp >= 0:
                old_q = mem[g.group_q + grp]
                if s == 0 and j >= 0:
                    mem[g.group_q + grp] = mem[g.ref_rank + j] + 1
            cost += inc
            bound_left += delta
            mem[fr + 3] = 1
            mem[fr + 4] = inc
            mem[fr + 5] = j
            mem[fr + 6] = s
            mem[fr + 7] = old
            mem[fr + 8] = delta
            mem[fr + 9] = old_q
            if d + 1 == n:
                if greedy or not state.has_best or cost < state.best_cost or not state.best_is_lex:
                    state.has_best = True
                    state.best_cost = cost
                    state.best_is_lex = not greedy
                    for e in range(n):
                        mem[g.best_j + e] = mem[g.chosen_j + e]
                        mem[g.best_s + e] = mem[g.chosen_s + e]
                    if greedy:
                        return cost
                continue
            depth += 1
            self._choices(t, r, state, g, greedy, depth, cost, bound_left)
        return state.best_cost if state.has_best else -1

    def _fresh(self, t: int, r: int, state: _State, g: _Regions) -> None:
        """The state a search starts from: nothing chosen, only the forced links made."""
        mem = self.mem
        for x in range(state.n_stages):
            mem[g.need + x] = mem[g.rest + x]
        for i in range(t):
            mem[g.at_c + i] = mem[g.fj + i]
        for j in range(r):
            mem[g.used + j] = 0
            mem[g.tree + j + 1] = 0
        for k in range(t * r):
            mem[g.twin + k] = -1
        for d in range(state.n):
            mem[g.chosen_j + d] = UNSET
            mem[g.chosen_s + d] = UNSET
        for k in range(state.n_groups):
            mem[g.group_q + k] = 0

    def _choices(self, t: int, r: int, state: _State, g: _Regions, greedy: bool, d: int, cost: int,
                 bound_left: int) -> None:
        """``choices`` of ``alignment._Search._dfs``: the choices at decision ``d``, written to its frame as
        (cost increment, reference position or -1, stage, change of the groups' bound)."""
        mem = self.mem
        n, n_stages, w1, w2 = state.n, state.n_stages, state.w1, state.w2
        fr = g.frame + 10 * d
        at = mem[g.choice_at + d]
        mem[fr] = at
        mem[fr + 1] = 0
        mem[fr + 2] = 0
        mem[fr + 3] = 0
        i = mem[g.dpos + d]
        after = mem[g.fj + i + 1] if i + 1 < t else UNSET
        skip_inc = w1 if after != UNSET else 0
        has_limit = state.has_best
        limit = state.best_cost
        floor = cost + bound_left
        short = 0
        only_stage = -1
        total_need = 0
        for x in range(n_stages):
            total_need += mem[g.need + x]
            if mem[g.need + x] > mem[g.avail + x * (n + 1) + d + 1]:
                short += 1
                only_stage = x
        if short > 1 or total_need - 1 > n - d - 1:
            return
        n_chosen = _tree_sum(mem, g.tree, r, r - 1)
        grp = mem[g.group_of + d]
        now = 0
        unlinked = NONE
        tab = 0
        rr = 0
        a = 0
        q = 0
        if grp >= 0:
            tab = mem[g.table_at + grp]
            rr = mem[g.group_r + grp]
            a = mem[g.group_a + d]
            q = mem[g.group_q + grp]
            at_state = mem[tab + a * (rr + 1) + q]
            unlinked = mem[tab + (a + 1) * (rr + 1) + q]
            if at_state == NONE:
                return
            now = at_state
        found = 0
        before = mem[g.at_c + i - 1] if i > 0 else UNSET
        for o in range(mem[g.opt_n + d]):
            p = mem[g.opt_at + d] + 3 * o
            j, s, static = mem[p], mem[p + 1], mem[p + 2]
            if (mem[g.used + j] or mem[g.need + s] == 0 or (only_stage >= 0 and s != only_stage)
                    or j <= mem[g.twin + mem[g.first_c + i] * r + mem[g.first_r + j]]):
                continue
            delta = 0
            if grp >= 0:
                later = mem[tab + (a + 1) * (rr + 1) + mem[g.ref_rank + j] + 1] if s == 0 else unlinked
                if later == NONE:
                    continue
                delta = later - now
            inc = static + (n_chosen - _tree_sum(mem, g.tree, r, j)) * w2
            if before == UNSET or before != j - 1:
                inc += w1
            if after != UNSET and after != j + 1:
                inc += w1
            if has_limit and floor + inc + delta > limit:
                continue
            if only_stage >= 0 and mem[g.need + s] - 1 > mem[g.avail + s * (n + 1) + d + 1]:
                continue
            c = at + 4 * found
            mem[c] = inc
            mem[c + 1] = j
            mem[c + 2] = s
            mem[c + 3] = delta
            found += 1
        if greedy:                             # by (increment + change of bound, reference position), stably
            for e in range(1, found):
                key_v, key_j = mem[at + 4 * e] + mem[at + 4 * e + 3], mem[at + 4 * e + 1]
                v0, v1, v2, v3 = mem[at + 4 * e], mem[at + 4 * e + 1], mem[at + 4 * e + 2], mem[at + 4 * e + 3]
                f = e
                while f > 0 and (mem[at + 4 * (f - 1)] + mem[at + 4 * (f - 1) + 3] > key_v
                                 or (mem[at + 4 * (f - 1)] + mem[at + 4 * (f - 1) + 3] == key_v
                                     and mem[at + 4 * (f - 1) + 1] > key_j)):
                    for h in range(4):
                        mem[at + 4 * f + h] = mem[at + 4 * (f - 1) + h]
                    f -= 1
                mem[at + 4 * f] = v0
                mem[at + 4 * f + 1] = v1
                mem[at + 4 * f + 2] = v2
                mem[at + 4 * f + 3] = v3
        delta = 0
        if grp >= 0:
            if unlinked == NONE:
                mem[fr + 1] = found
                return
            delta = unlinked - now
        if short == 0 and total_need <= n - d - 1 and (not has_limit or floor + skip_inc + delta <= limit):
            c = at + 4 * found
            mem[c] = skip_inc
            mem[c + 1] = -1
            mem[c + 2] = -1
            mem[c + 3] = delta
            found += 1
        mem[fr + 1] = found


def _first(order: Ints, lo: int, i: int) -> int:
    """The first position, within ``order[lo:]``, of the type at ``order[lo + i]``."""
    x = order[lo + i]
    for p in range(i):
        if order[lo + p] == x:
            return p
    return i


def _tree_add(mem: Ints, tree: int, r: int, j: int, v: int) -> None:
    k = j + 1
    while k <= r:
        mem[tree + k] += v
        k += k & -k


def _tree_sum(mem: Ints, tree: int, r: int, j: int) -> int:
    """How many chosen reference positions are at most ``j``."""
    total = 0
    k = j + 1
    while k > 0:
        total += mem[tree + k]
        k -= k & -k
    return total


class _State:
    """The search's scalars: sizes, weights, the best so far, the node count."""

    def __init__(self, n: int, n_stages: int, w1: int, w2: int, base: int, start_bound: int, budget: int,
                 n_groups: int):
        self.n, self.n_stages, self.w1, self.w2, self.n_groups = n, n_stages, w1, w2, n_groups
        self.base, self.start_bound, self.budget = base, start_bound, budget
        self.nodes = 0
        self.exact = True
        self.lex_first = True
        self.has_best = False
        self.best_is_lex = False
        self.best_cost = 0


class _Regions:
    """Where each of the search's arrays begins in the scratch."""

    def __init__(self, rest: int, need: int, avail: int, group_of: int, group_a: int, ref_rank: int, group_q: int,
                 table_at: int, group_r: int, at_c: int, used: int, tree: int, twin: int, first_c: int, first_r: int,
                 chosen_j: int, chosen_s: int, best_j: int, best_s: int, frame: int, choice_at: int, dpos: int,
                 opt_at: int, opt_n: int, fj: int):
        self.rest, self.need, self.avail, self.group_of, self.group_a = rest, need, avail, group_of, group_a
        self.ref_rank, self.group_q, self.table_at, self.group_r = ref_rank, group_q, table_at, group_r
        self.at_c, self.used, self.tree, self.twin = at_c, used, tree, twin
        self.first_c, self.first_r, self.chosen_j, self.chosen_s = first_c, first_r, chosen_j, chosen_s
        self.best_j, self.best_s, self.frame, self.choice_at = best_j, best_s, frame, choice_at
        self.dpos, self.opt_at, self.opt_n, self.fj = dpos, opt_at, opt_n, fj
