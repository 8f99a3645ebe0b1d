# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Rule 1's per-stage link counts on interned token ids: the compiled engine's helper for the default mode.

:mod:`scorer.metric.engine.links` and :mod:`scorer.metric.engine.counting` define rule 1 on token
types. This module computes the same numbers on another representation, for the shapes nearly every
pair has: token ids sorted and merged for the leading exact stage, then the links between the
leftover types, found through each type's sorted key ids, split into components (union-find) that
are single links or stars. For anything else (a general component, very many type pairs) it answers
None and the caller uses the definition.

It is plain Python, run as such by the tests, which check it against the definition on every small
graph (``tests/test_id_counts.py``); ``setup.py`` compiles this same file, typed by ``id_counts.pxd``
beside it (Cython's pure-Python mode), and CI checks that both engines write byte-identical outputs
on the WMT21 benchmark.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Container, MutableSequence, Sequence

Ints = MutableSequence[int]  # an array('i') (a typed memoryview of one when compiled)

#: Above this many (free candidate type, free reference type) pairs the definition's key index is cheaper.
MAX_TYPE_PAIRS = 65536
#: Words of a token's key filter: its key ids hashed into 256 bits; two tokens whose bits miss share no key.
MASK_WORDS = 4
_HASH = 2654435761


def _zeros(typecode: str, n: int) -> array:
    return array(typecode, bytes(array(typecode).itemsize * n))


def _grown(typecode: str, old: Ints, used: int, needed: int) -> array:
    """A new array of at least ``needed`` items holding ``old[:used]``, then zeros (``old`` may be a
    typed memoryview when compiled)."""
    new = array(typecode, old[:used])
    new.frombytes(bytes(new.itemsize * (max(needed, 2 * len(old)) - used)))
    return new


def _meet(data: Ints, i: int, ni: int, j: int, nj: int) -> bool:
    """Whether the sorted runs ``data[i:i+ni]`` and ``data[j:j+nj]`` share a value."""
    end_i, end_j = i + ni, j + nj
    while i < end_i and j < end_j:
        x, y = data[i], data[j]
        if x == y:
            return True
        if x < y:
            i += 1
        else:
            j += 1
    return False


def _sort(work: Ints, lo: int, hi: int) -> None:
    """Sorts ``work[lo:hi]`` in place: by insertion when short, else by heapsort."""
    if hi - lo <= 24:
        for i in range(lo + 1, hi):
            x = work[i]
            j = i
            while j > lo and work[j - 1] > x:
                work[j] = work[j - 1]
                j -= 1
            work[j] = x
        return
    n = hi - lo
    for root in range(n // 2 - 1, -1, -1):
        _sift(work, lo, root, n)
    for end in range(n - 1, 0, -1):
        work[lo], work[lo + end] = work[lo + end], work[lo]
        _sift(work, lo, 0, end)


def _sift(work: Ints, lo: int, root: int, n: int) -> None:
    """Moves ``work[lo + root]`` down the max-heap ``work[lo:lo + n]`` to its place."""
    x = work[lo + root]
    child = 2 * root + 1
    while child < n:
        if child + 1 < n and work[lo + child + 1] > work[lo + child]:
            child += 1
        if work[lo + child] <= x:
            break
        work[lo + root] = work[lo + child]
        root = child
        child = 2 * root + 1
    work[lo + root] = x


def _run(work: Ints, i: int, end: int, x: int) -> int:
    """How many of ``work[i:end]``, from ``i`` on, equal ``x`` (0 when ``work[i]`` does not)."""
    n = i
    while n < end and work[n] == x:
        n += 1
    return n - i


def _find(work: Ints, parent: int, x: int) -> int:
    """The root of node ``x`` in the union-find stored at ``work[parent:]`` (paths halved on the way)."""
    while work[parent + x] != x:
        work[parent + x] = work[parent + work[parent + x]]
        x = work[parent + x]
    return x


class KeyTable:
    """The sorted key ids of every interned token at each stage after the leading exact one.

    ``add(token, keys)`` interns a token from one sorted list of key ids per stage and returns its
    id; ``counts(cand, ref)`` takes two lists of tokens and interns a token it has not seen by
    calling ``intern(token)``, which must call :meth:`add` and return the id.
    """

    def __init__(self, n_stages: int, intern: Callable[[str], int]):
        self.ids: dict[str, int] = {}
        self.intern = intern
        self.n_stages = n_stages
        self.n_tokens = 0
        self.n_data = 0
        self.start = _zeros(
            "i", 1024 * max(n_stages, 1)
        )  # start[t * n_stages + s]: where t's keys at s begin
        self.length = _zeros("i", 1024 * max(n_stages, 1))
        self.mask = _zeros("Q", 1024 * MASK_WORDS)
        self.data = _zeros("i", 16384)
        self.work = _zeros("i", 1024)  # scratch for one pair
        self.order = _zeros("i", 1024)  # a pair's ids in text order (aligned)

    def add(self, token: str, keys_by_stage: list[list[int]]) -> int:
        """Intern a token: ``keys_by_stage[s]`` is its sorted list of key ids at stage ``s``."""
        found = self.ids.get(token)
        if found is not None:
            return found
        if len(keys_by_stage) != self.n_stages:
            raise ValueError("one list of key ids per stage is needed")
        t, S = self.n_tokens, self.n_stages
        needed = self.n_data
        for keys in keys_by_stage:
            needed += len(keys)
        if (t + 1) * S > len(self.start):
            self.start = _grown("i", self.start, t * S, (t + 1) * S)
            self.length = _grown("i", self.length, t * S, (t + 1) * S)
        if (t + 1) * MASK_WORDS > len(self.mask):
            self.mask = _grown("Q", self.mask, t * MASK_WORDS, (t + 1) * MASK_WORDS)
        if needed > len(self.data):
            self.data = _grown("i", self.data, self.n_data, needed)
        n_data = self.n_data
        for s in range(S):
            keys = keys_by_stage[s]
            self.start[t * S + s] = n_data
            self.length[t * S + s] = len(keys)
            for k in keys:
                self.data[n_data] = k
                n_data += 1
                self._mark(t, k)
        self.n_data = n_data
        self.n_tokens = t + 1
        self.ids[token] = t
        return t

    def add_keys(self, token: str, keys_by_stage: list[Collection[str]], key_ids: dict[str, int]) -> int:
        """:meth:`add`, with ``keys_by_stage[s]`` the token's distinct key strings at stage ``s``, numbered by
        ``key_ids`` (a key not in it is given the next id there)."""
        found = self.ids.get(token)
        if found is not None:
            return found
        numbered: list[list[int]] = []
        for keys in keys_by_stage:
            stage_ids: list[int] = []
            for key in keys:
                k = key_ids.get(key)
                if k is None:
                    k = len(key_ids)
                    key_ids[key] = k
                stage_ids.append(k)
            stage_ids.sort()
            numbered.append(stage_ids)
        return self.add(token, numbered)

    def export(self, skip: Container[str]) -> tuple[list[str], bytes, bytes, bytes]:
        """The interned tokens, except those in ``skip``, in id order, with their keys as :meth:`restore`
        takes them: (tokens, start, length, data), the arrays as bytes of ``array('i')``."""
        S = self.n_stages
        tokens = [""] * self.n_tokens
        for token, t in self.ids.items():
            tokens[t] = token
        kept: list[str] = []
        start, length, data = array("i"), array("i"), array("i")
        for t in range(self.n_tokens):
            if tokens[t] in skip:
                continue
            kept.append(tokens[t])
            for s in range(S):
                start.append(len(data))
                length.append(self.length[t * S + s])
                for k in range(self.start[t * S + s], self.start[t * S + s] + self.length[t * S + s]):
                    data.append(self.data[k])
        return kept, start.tobytes(), length.tobytes(), data.tobytes()

    def restore(self, tokens: list[str], start: bytes, length: bytes, data: bytes, n_keys: int) -> bool:
        """Intern ``tokens`` at once, as :meth:`export` gave them, into an empty table; False (and the table
        left empty) unless the arrays are whole, every key run lies inside ``data``, is strictly increasing
        and holds key ids below ``n_keys``, and the tokens are distinct strings."""
        S = self.n_stages
        n = len(tokens)
        if self.n_tokens or S == 0 or len(start) != 4 * n * S or len(length) != 4 * n * S or len(data) % 4:
            return False
        starts, lengths, keys = array("i"), array("i"), array("i")
        starts.frombytes(start)
        lengths.frombytes(length)
        keys.frombytes(data)
        n_data = len(keys)
        sv: Ints = starts
        lv: Ints = lengths
        kv: Ints = keys
        for i in range(n * S):
            a = sv[i]
            b = lv[i]
            if a < 0 or b < 0 or a > n_data - b:
                return False
            for k in range(a, a + b):
                if kv[k] < 0 or kv[k] >= n_keys or (k > a and kv[k] <= kv[k - 1]):
                    return False
        ids: dict[str, int] = {}
        for token in tokens:
            if type(token) is not str or token in ids:
                return False
            ids[token] = len(ids)
        self.start = starts
        self.length = lengths
        self.data = keys
        self.mask = _zeros("Q", max(n, 1) * MASK_WORDS)
        for t in range(n):
            for s in range(S):
                for k in range(sv[t * S + s], sv[t * S + s] + lv[t * S + s]):
                    self._mark(t, kv[k])
        self.ids = ids
        self.n_tokens = n
        self.n_data = n_data
        return True

    def _mark(self, t: int, k: int) -> None:
        """Sets the bit of key id ``k`` in token ``t``'s key filter."""
        h = ((k * _HASH) & 0xFFFFFFFF) >> 24  # a byte of the key id's hash: one of 256 bits
        bit = 1
        bit <<= h & 63
        self.mask[t * MASK_WORDS + ((h >> 6) & (MASK_WORDS - 1))] |= bit

    def counts(self, cand: list[str], ref: list[str]) -> list[int] | None:
        """Links of each stage (the exact stage first) under rule 1, or None where the definition must
        answer. ``cand`` and ``ref`` are non-empty lists of tokens."""
        return self.counts_each(cand, [ref])[0]

    def counts_each(self, cand: Sequence[str], refs: Sequence[Sequence[str]]) -> list[list[int] | None]:
        """:meth:`counts` of ``cand`` against each of ``refs`` (sequences of tokens), the candidate's ids
        looked up and sorted once; None for an empty text and where the definition must answer."""
        nc = len(cand)
        self._place(cand, 0)
        _sort(self.work, 0, nc)
        found: list[list[int] | None] = []
        for ref in refs:
            nr = len(ref)
            if nc == 0 or nr == 0:
                found.append(None)
                continue
            self._place(ref, nc)  # after the candidate's sorted ids, which stay in place
            work = self.work  # taken after interning, which may grow the other arrays but never this one
            _sort(work, nc, nc + nr)
            found.append(self._rule1(work, nc, nr)[0])
        return found

    def _place(self, tokens: Sequence[str], at: int) -> None:
        """Writes the ids of ``tokens`` to ``work[at:]``, interning those not seen; ``work[:at]`` is kept."""
        n = len(tokens)
        if len(self.work) < 3 * (at + n):
            self.work = _grown("i", self.work, at, 3 * (at + n))
        ids, intern = self.ids, self.intern
        for i in range(n):
            found = ids.get(tokens[i])
            self.work[at + i] = intern(tokens[i]) if found is None else found

    def _rule1(self, work: Ints, nc: int, nr: int) -> tuple[list[int] | None, int, int, int]:
        """Rule 1 on the sorted ids ``work[:nc]`` (candidate) and ``work[nc:nc + nr]`` (reference): the links
        of
        each stage (None where the definition must answer), and how many free candidate types, free
        reference types and links between them it left in ``self.work`` (grown if needed).

        ``work`` is scratch: after the ids, the free candidate types and their counts, then the free
        reference types and theirs, then the links and what :meth:`_later_stages` needs.
        """
        exact, nfc, nfr = self._exact_stage(work, nc, nr)
        counts = [exact] + [0] * self.n_stages
        if nfc == 0 or nfr == 0 or self.n_stages == 0:
            return counts, nfc, nfr, 0
        if nfc * nfr > MAX_TYPE_PAIRS:
            return None, nfc, nfr, 0
        work = self._scratch(nc, nr, nfc, nfr)
        n_links = self._type_links(work, nc, nr, nfc, nfr)
        if n_links:
            return self._later_stages(counts, work, nc, nr, nfc, nfr, n_links), nfc, nfr, n_links
        return counts, nfc, nfr, 0

    def _exact_stage(self, work: Ints, nc: int, nr: int) -> tuple[int, int, int]:
        """The leading exact stage on the sorted ids: (its links, free candidate types, free reference
        types). Min counts of every shared type are linked; what is left over is free, written to
        ``work`` after the ids with its counts."""
        fc_id = nc + nr  # free candidate types, then their counts,
        fc_n = fc_id + nc
        fr_id = fc_n + nc  # free reference types, then their counts
        fr_n = fr_id + nr
        i, j, end_c, end_r = 0, nc, nc, nc + nr
        nfc = nfr = exact = 0
        while i < end_c or j < end_r:
            x = work[i] if j >= end_r or (i < end_c and work[i] < work[j]) else work[j]  # the smaller head
            na = _run(work, i, end_c, x)
            nb = _run(work, j, end_r, x)
            i += na
            j += nb
            exact += min(na, nb)
            if na > nb:
                work[fc_id + nfc] = x
                work[fc_n + nfc] = na - nb
                nfc += 1
            elif nb > na:
                work[fr_id + nfr] = x
                work[fr_n + nfr] = nb - na
                nfr += 1
        return exact, nfc, nfr

    def _scratch(self, nc: int, nr: int, nfc: int, nfr: int) -> Ints:
        """``work``, grown (its first ``3 * (nc + nr)`` items kept) to hold the links and components of
        ``nfc`` x ``nfr`` free types."""
        needed = 3 * (nc + nr) + 3 * nfc * nfr + 4 * (nfc + nfr)
        if len(self.work) < needed:
            self.work = _grown("i", self.work, 3 * (nc + nr), needed)
        return self.work

    def _type_links(self, work: Ints, nc: int, nr: int, nfc: int, nfr: int) -> int:
        """How many links join the free types: each (free candidate type, free reference type) pair with
        the first stage whose keys meet, written to ``work`` as (candidate index, reference index, stage)
        from ``3 * (nc + nr)`` on."""
        S = self.n_stages
        start, length, mask, data = self.start, self.length, self.mask, self.data
        fc_id = nc + nr
        fr_id = fc_id + 2 * nc
        links = 3 * (nc + nr)
        n_links = 0
        for i in range(nfc):
            ta = work[fc_id + i]
            for j in range(nfr):
                tb = work[fr_id + j]
                if not (
                    (mask[ta * MASK_WORDS] & mask[tb * MASK_WORDS])
                    | (mask[ta * MASK_WORDS + 1] & mask[tb * MASK_WORDS + 1])
                    | (mask[ta * MASK_WORDS + 2] & mask[tb * MASK_WORDS + 2])
                    | (mask[ta * MASK_WORDS + 3] & mask[tb * MASK_WORDS + 3])
                ):
                    continue
                for s in range(S):
                    if _meet(
                        data, start[ta * S + s], length[ta * S + s], start[tb * S + s], length[tb * S + s]
                    ):
                        work[links + 3 * n_links] = i
                        work[links + 3 * n_links + 1] = j
                        work[links + 3 * n_links + 2] = s
                        n_links += 1
                        break
        return n_links

    def _later_stages(
        self, counts: list[int], work: Ints, nc: int, nr: int, nfc: int, nfr: int, n_links: int
    ) -> list[int] | None:
        """The stages after the exact one, between the free types that :meth:`_rule1` left in ``work``
        with their ``n_links`` links (:meth:`_type_links`); adds to ``counts`` and returns it."""
        S = self.n_stages
        fc_n = nc + nr + nc  # the counts of the free candidate types
        fr_n = fc_n + nc + nr  # the counts of the free reference types
        links = 3 * (nc + nr)  # (candidate index, reference index, stage) of each link
        parent = links + 3 * nfc * nfr  # union-find over candidate nodes, then reference nodes
        size = parent + nfc + nfr  # links in the component of each root
        same_a = size + nfc + nfr  # the one candidate index of the root's links (-1: several)
        same_b = same_a + nfc + nfr  # the one reference index of the root's links (-1: several)
        # components: union-find on candidate nodes 0..nfc-1 and reference nodes nfc..
        for k in range(nfc + nfr):
            work[parent + k] = k
            work[size + k] = 0
            work[same_a + k] = -2
            work[same_b + k] = -2
        for k in range(n_links):
            i = _find(work, parent, work[links + 3 * k])
            j = _find(work, parent, nfc + work[links + 3 * k + 1])
            if i != j:
                work[parent + max(i, j)] = min(i, j)
        for k in range(n_links):
            root = _find(work, parent, work[links + 3 * k])
            i = work[links + 3 * k]
            j = work[links + 3 * k + 1]
            work[size + root] += 1
            work[same_a + root] = i if work[same_a + root] == -2 or work[same_a + root] == i else -1
            work[same_b + root] = j if work[same_b + root] == -2 or work[same_b + root] == j else -1
        for k in range(nfc + nfr):
            if work[size + k] > 1 and work[same_a + k] == -1 and work[same_b + k] == -1:
                return None  # a general component: the definition's maximum-weight flow
        for k in range(n_links):
            if work[size + _find(work, parent, work[links + 3 * k])] == 1:
                counts[work[links + 3 * k + 2] + 1] += min(
                    work[fc_n + work[links + 3 * k]], work[fr_n + work[links + 3 * k + 1]]
                )
        # stars: the centre's tokens go to the leaves of the earliest stage first
        for root in range(nfc + nfr):
            if work[size + root] < 2:
                continue
            by_cand = work[same_a + root] >= 0
            centre = work[fc_n + work[same_a + root]] if by_cand else work[fr_n + work[same_b + root]]
            for s in range(S):
                for k in range(n_links):
                    if work[links + 3 * k + 2] != s or _find(work, parent, work[links + 3 * k]) != root:
                        continue
                    leaf = (
                        work[fr_n + work[links + 3 * k + 1]] if by_cand else work[fc_n + work[links + 3 * k]]
                    )
                    n = min(centre, leaf)
                    centre -= n
                    counts[s + 1] += n
        return counts
