# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Rule 1's per-stage link counts on interned token ids: the compiled engine's one helper.

:mod:`scorer.metric.engine.links` and :mod:`scorer.metric.engine.counting` define rule 1 on token types;
this module counts the same on token ids. The leading exact stage links the smaller count of every id the
texts share (tallied in an array indexed by id); what is left over is free. A free candidate type and a
free reference type are linked at the first later stage whose sorted key ids meet (that type graph is
also what :meth:`KeyTable.graph` gives the compiled alignment). When every link has an end no other link
touches, each component is one link or a star, and the definition's counts are the greedy ones: stage by
stage, each link takes what both its ends have left. Anything else (a general component, or very many
type pairs) is answered None, and the caller asks the definition.

It is plain Python, run as such by the tests against the definition on every small graph
(``tests/test_id_counts.py``); ``setup.py`` compiles this same file typed by ``id_counts.pxd``
(Cython's pure-Python mode), and CI checks that both engines write byte-identical outputs on WMT21.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Container, MutableSequence, Sequence
from typing import Any

Ints = MutableSequence[int]  # an array (a typed memoryview of one when compiled)

#: Above this many (free candidate type, free reference type) pairs the definition's key index is cheaper.
MAX_TYPE_PAIRS = 65536
#: Words of a token's key filter: each key id sets one of 256 bits; two tokens whose bits miss share no key.
MASK_WORDS = 4


def _grown(typecode: str, old: Any, used: int, needed: int) -> array:
    """A new array of at least ``needed`` items holding ``old[:used]``, then zeros. ``old`` is an array, or
    compiled a typed memoryview of one (read an item at a time by Python: its items are copied as bytes)."""
    new = array(typecode)
    new.frombytes(memoryview(old)[:used].tobytes())
    new.frombytes(bytes(new.itemsize * (max(needed, 2 * len(old)) - used)))
    return new


def _mark(mask: Ints, t: int, k: int) -> None:
    """Sets the bit of key id ``k`` in token ``t``'s key filter (a byte of the id's multiplicative hash)."""
    h = ((k * 2654435761) & 0xFFFFFFFF) >> 24
    bit = 1
    bit <<= h & 63
    mask[t * MASK_WORDS + (h >> 6)] |= bit


def _meet(data: Ints, i: int, ni: int, j: int, nj: int) -> bool:
    """Whether the sorted runs ``data[i:i+ni]`` and ``data[j:j+nj]`` share a value."""
    end_i, end_j = i + ni, j + nj
    while i < end_i and j < end_j:
        if data[i] == data[j]:
            return True
        if data[i] < data[j]:
            i += 1
        else:
            j += 1
    return False


class KeyTable:
    """The sorted key ids of every interned token at each stage after the leading exact one.

    ``add(token, keys)`` interns a token from one sorted list of key ids per stage and returns its id;
    ``counts_each`` and ``graph`` intern a token not seen yet by calling ``intern(token)``, which must call
    :meth:`add` and return the id.
    """

    def __init__(self, n_stages: int, intern: Callable[[str], int]):
        self.ids: dict[str, int] = {}
        self.tokens: list[str] = []  # by id
        self.intern = intern
        self.n_stages = n_stages
        self.n_tokens = 0
        self.n_data = 0
        self.start = _grown("i", array("i"), 0, 1024 * max(n_stages, 1))  # [t * n_stages + s]: t's keys at s
        self.length = _grown("i", array("i"), 0, 1024 * max(n_stages, 1))
        self.mask = _grown("Q", array("Q"), 0, 1024 * MASK_WORDS)
        self.data = _grown("i", array("i"), 0, 16384)
        self.work = _grown("i", array("i"), 0, 1024)  # the ids of the texts being compared
        self.tally = _grown("i", array("i"), 0, 1024)

    def add(self, token: str, keys_by_stage: list[list[int]]) -> int:
        """Intern a token: ``keys_by_stage[s]`` is its sorted list of key ids at stage ``s``."""
        found = self.ids.get(token)
        if found is not None:
            return found
        if len(keys_by_stage) != self.n_stages:
            raise ValueError("one list of key ids per stage is needed")
        t, S, n_data = self.n_tokens, self.n_stages, self.n_data
        needed = n_data + sum([len(keys) for keys in keys_by_stage])
        if (t + 1) * S > len(self.start):
            self.start = _grown("i", self.start, t * S, (t + 1) * S)
            self.length = _grown("i", self.length, t * S, (t + 1) * S)
        if (t + 1) * MASK_WORDS > len(self.mask):
            self.mask = _grown("Q", self.mask, t * MASK_WORDS, (t + 1) * MASK_WORDS)
        if needed > len(self.data):
            self.data = _grown("i", self.data, n_data, needed)
        for s in range(S):
            keys = keys_by_stage[s]
            self.start[t * S + s] = n_data
            self.length[t * S + s] = len(keys)
            for k in keys:
                self.data[n_data] = k
                n_data += 1
                _mark(self.mask, t, k)
        self.n_data, self.n_tokens = n_data, t + 1
        self.ids[token] = t
        self.tokens.append(token)
        return t

    def add_keys(self, token: str, keys_by_stage: list[Collection[str]], key_ids: dict[str, int]) -> int:
        """:meth:`add`, with ``keys_by_stage[s]`` the token's distinct key strings at stage ``s``, numbered by
        ``key_ids`` (a key not in it is given the next id there); a token already interned keeps its id."""
        if token in self.ids:
            return self.ids[token]
        numbered: list[list[int]] = []
        for keys in keys_by_stage:
            numbered.append(sorted([key_ids.setdefault(key, len(key_ids)) for key in keys]))
        return self.add(token, numbered)

    def unknown(self, texts: Sequence[Sequence[str]]) -> list[str]:
        """The distinct tokens of ``texts`` not interned yet, in the order first met."""
        ids = self.ids
        found: dict[str, None] = {}
        for text in texts:
            for token in text:
                if token not in ids and token not in found:
                    found[token] = None
        return list(found)

    def export(self, skip: Container[str]) -> tuple[list[str], bytes, bytes, bytes]:
        """The interned tokens, except those in ``skip``, in id order, with their keys as :meth:`restore`
        takes them: (tokens, start, length, data), the arrays as bytes of ``array('i')``."""
        S = self.n_stages
        kept = [token for token in self.tokens if token not in skip]
        ids = [self.ids[token] for token in kept]
        size = 0
        for t in ids:
            for i in range(t * S, t * S + S):
                size += self.length[i]
        start = _grown("i", array("i"), 0, len(kept) * S)  # zeros, filled below
        length = _grown("i", array("i"), 0, len(kept) * S)
        data = _grown("i", array("i"), 0, size)
        sv: Ints = start
        lv: Ints = length
        dv: Ints = data
        j = at = 0
        for t in ids:
            for i in range(t * S, t * S + S):
                sv[j] = at
                lv[j] = self.length[i]
                for k in range(self.start[i], self.start[i] + self.length[i]):
                    dv[at] = self.data[k]
                    at += 1
                j += 1
        return kept, start.tobytes(), length.tobytes(), data.tobytes()

    def restore(self, tokens: list[str], start: bytes, length: bytes, data: bytes, n_keys: int) -> bool:
        """Intern ``tokens`` at once, as :meth:`export` gave them, into an empty table; False (and the table
        left empty) unless the arrays are whole, every key run lies inside ``data``, is strictly increasing
        and holds key ids below ``n_keys``, and the tokens are distinct strings."""
        S, n = self.n_stages, len(tokens)
        if self.n_tokens or S == 0 or len(start) != 4 * n * S or len(length) != 4 * n * S or len(data) % 4:
            return False
        starts, lengths, keys = array("i", start), array("i", length), array("i", data)
        sv: Ints = starts
        lv: Ints = lengths
        kv: Ints = keys
        for i in range(n * S):
            if sv[i] < 0 or lv[i] < 0 or sv[i] > len(keys) - lv[i]:
                return False
            for k in range(sv[i], sv[i] + lv[i]):
                if kv[k] < 0 or kv[k] >= n_keys or (k > sv[i] and kv[k] <= kv[k - 1]):
                    return False
        ids = {token: t for t, token in enumerate(tokens) if type(token) is str}
        if len(ids) != n:
            return False
        mask = _grown("Q", array("Q"), 0, max(n, 1) * MASK_WORDS)
        for i in range(n * S):
            for k in range(sv[i], sv[i] + lv[i]):
                _mark(mask, i // S, kv[k])
        self.start, self.length, self.data, self.mask = starts, lengths, keys, mask
        self.ids, self.tokens, self.n_tokens, self.n_data = ids, list(tokens), n, len(keys)
        return True

    def counts_each(self, cand: Sequence[str], refs: Sequence[Sequence[str]]) -> list[list[int] | None]:
        """:meth:`counts` of ``cand`` against each of ``refs``, the candidate looked up once; None for an
        empty text and where the definition must answer."""
        nc = self._place(cand, 0)
        found: list[list[int] | None] = []
        for ref in refs:
            found.append(self._counts(nc, self._place(ref, nc)) if nc and ref else None)
        return found

    def _place(self, tokens: Sequence[str], at: int) -> int:
        """Writes the ids of ``tokens`` (those not seen interned) to ``work[at:]``; returns how many."""
        if 4 * (at + len(tokens)) > len(self.work):
            self.work = _grown("i", self.work, at, 4 * (at + len(tokens)))
        for i in range(len(tokens)):
            t = self.ids.get(tokens[i])
            self.work[at + i] = self.intern(tokens[i]) if t is None else t
        return len(tokens)

    def graph(self, cand: Sequence[str], ref: Sequence[str]) -> tuple[Any, ...] | None:
        """The fields of :class:`~scorer.metric.engine.links.TypeGraph` for non-empty ``cand`` and ``ref``,
        found on ids (the compiled alignment's type graph); None above :data:`MAX_TYPE_PAIRS`."""
        nc = self._place(cand, 0)
        found = self._links(nc, self._place(ref, nc))
        return None if found is None else self._fields(cand, ref, nc, found)

    def _fields(
        self, cand: Sequence[str], ref: Sequence[str], nc: int, found: tuple[int, ...]
    ) -> tuple[Any, ...]:
        """:meth:`graph`'s fields, read back from what :meth:`_links` wrote (``found``: what it returned)."""
        exact, nfc, nfr, n_links = found
        w, t, fc, fr = self.work, self.tokens, nc + len(ref), 4 * nc + len(ref)  # as in _links
        free_c = {t[w[fc + a]]: w[fc + nc + a] for a in range(nfc)}
        free_r = {t[w[fr + b]]: w[fr + len(ref) + b] for b in range(nfr)}
        links = {
            (t[w[fc + w[k]]], t[w[fr + w[k + 1]]]): w[k + 2] + 1
            for k in range(4 * fc, 4 * fc + 3 * n_links, 3)
        }
        return exact, frozenset(cand).intersection(ref), free_c, free_r, links

    def forced_or_graph(self, cand: Sequence[str], ref: Sequence[str]) -> tuple[Any, ...] | None:
        """For non-empty ``cand`` and ``ref`` whose links are all forced (the alignment's point 1: every type
        in both texts as often in each, every later-stage component one link between types of one text
        alone, as often on both ends), the alignment's (links, chunks), read off the token positions: the
        k-th occurrence of a type linked to the k-th of its partner. Otherwise the five fields of
        :meth:`graph`, for the alignment's search; None above :data:`MAX_TYPE_PAIRS`."""
        nc = self._place(cand, 0)
        nr = self._place(ref, nc)
        found = self._links(nc, nr)
        if found is None:
            return None
        nfc, nfr, n_links = found[1], found[2], found[3]
        n, w, tally = nc + nr, self.work, self.tally  # tally: zeros, as _links leaves it
        fc, lc, ec = n, n + nc, n + 2 * nc
        fr, lr, er = n + 3 * nc, n + 3 * nc + nr, n + 3 * nc + 2 * nr
        links = 4 * n  # (candidate index, reference index, stage) a link, as _links wrote them
        # a free type the other text also holds is linked in part: a search
        clear = self._wholly_free(0, nc, fc, lc, nfc) and self._wholly_free(nc, n, fr, lr, nfr)
        for k in range(links, links + 3 * n_links, 3):  # each link alone at both ends, as often at both
            clear = clear and w[ec + w[k]] == 1 and w[er + w[k + 1]] == 1 and w[lc + w[k]] == w[lr + w[k + 1]]
        if not clear:
            return self._fields(cand, ref, nc, found)
        after = links + 3 * n_links  # from here: each reference position's next one of its type (-1: none)
        if after + nr > len(w):
            self.work = w = _grown("i", w, after, after + nr)
        for j in range(nr - 1, -1, -1):  # tally of a reference type: its first position not linked yet, + 1
            w[after + j] = tally[w[nc + j]] - 1
            tally[w[nc + j]] = j + 1
        for k in range(links, links + 3 * n_links, 3):  # tally of a linked candidate type: -(partner id + 1)
            tally[w[fc + w[k]]] = -w[fr + w[k + 1]] - 1
        m = chunks = 0
        last = -2  # the reference position the previous candidate position is linked to (-2: none)
        for i in range(nc):
            t = tally[w[i]]
            if t < 0:
                t = tally[-t - 1]
            j = t - 1
            if j < 0:
                last = -2
                continue
            tally[w[nc + j]] = w[after + j] + 1
            m += 1
            if last != j - 1:
                chunks += 1
            last = j
        for i in range(n):
            tally[w[i]] = 0
        return m, chunks

    def _wholly_free(self, start: int, stop: int, free: int, surplus: int, n_free: int) -> bool:
        """Whether each of the ``n_free`` free types at ``work[free:]`` (surpluses at ``work[surplus:]``) is
        free in every occurrence in the text ``work[start:stop]``: no exact link takes any of it. ``tally``
        is left as it was found, zeros."""
        w, tally = self.work, self.tally
        for i in range(start, stop):
            tally[w[i]] += 1
        wholly = True
        for a in range(n_free):
            wholly = wholly and tally[w[free + a]] == w[surplus + a]
        for i in range(start, stop):
            tally[w[i]] = 0
        return wholly

    def _counts(self, nc: int, nr: int) -> list[int] | None:
        """Links of each stage (the exact stage first) between the ids ``work[:nc]`` (candidate) and
        ``work[nc:nc + nr]`` (reference), or None."""
        found = self._links(nc, nr)
        if found is None:
            return None
        exact, nfc, nfr, n_links = found
        S, n, work = self.n_stages, nc + nr, self.work
        lc, ec, lr, er = n + nc, n + 2 * nc, n + 3 * nc + nr, n + 3 * nc + 2 * nr
        counts = [exact] + [0] * S
        for k in range(4 * n, 4 * n + 3 * n_links, 3):
            if work[ec + work[k]] > 1 and work[er + work[k + 1]] > 1:
                return None  # a general component: the definition's maximum-weight flow
        for s in range(S):
            for k in range(4 * n, 4 * n + 3 * n_links, 3):
                if work[k + 2] == s:
                    m = min(work[lc + work[k]], work[lr + work[k + 1]])
                    work[lc + work[k]] -= m
                    work[lr + work[k + 1]] -= m
                    counts[s + 1] += m
        return counts

    def _links(self, nc: int, nr: int) -> tuple[int, int, int, int] | None:
        """Between the ids ``work[:nc]`` (candidate) and ``work[nc:nc + nr]`` (reference): the exact links,
        then each free type of a side with its surplus and its number of links, then the links (candidate
        index, reference index, stage after the exact one) written to ``work``; returns (exact links, free
        candidate types, free reference types, links), or None above :data:`MAX_TYPE_PAIRS`."""
        S, n = self.n_stages, nc + nr
        if len(self.tally) < self.n_tokens:
            self.tally = _grown("i", self.tally, 0, self.n_tokens)
        tally = self.tally  # by id: the candidate's surplus (> 0) or the reference's (< 0); zeros after
        work = self.work  # after the ids: each free type of a side, its surplus, its links; then the links
        fc, lc, ec = n, n + nc, n + 2 * nc
        fr, lr, er = n + 3 * nc, n + 3 * nc + nr, n + 3 * nc + 2 * nr
        exact = nfc = nfr = n_links = 0
        for i in range(nc):
            tally[work[i]] += 1
        for i in range(nc, n):
            exact += tally[work[i]] > 0
            tally[work[i]] -= 1
        for i in range(nc):
            if tally[work[i]] > 0:
                work[fc + nfc], work[lc + nfc], work[ec + nfc] = work[i], tally[work[i]], 0
                tally[work[i]] = 0
                nfc += 1
        for i in range(nc, n):
            if tally[work[i]] < 0:
                work[fr + nfr], work[lr + nfr], work[er + nfr] = work[i], -tally[work[i]], 0
                tally[work[i]] = 0
                nfr += 1
        if nfc == 0 or nfr == 0 or S == 0:
            return exact, nfc, nfr, 0
        if nfc * nfr > MAX_TYPE_PAIRS:
            return None
        if 4 * n + 3 * nfc * nfr > len(work):
            self.work = work = _grown("i", work, 4 * n, 4 * n + 3 * nfc * nfr)
        start, length, mask, data = self.start, self.length, self.mask, self.data
        for a in range(nfc):  # the links: (candidate index, reference index, stage) from 4 * n on
            ta = work[fc + a]
            for b in range(nfr):
                tb = work[fr + b]
                w = 0
                while w < MASK_WORDS and not (mask[ta * MASK_WORDS + w] & mask[tb * MASK_WORDS + w]):
                    w += 1
                if w == MASK_WORDS:
                    continue
                for s in range(S):
                    if _meet(
                        data, start[ta * S + s], length[ta * S + s], start[tb * S + s], length[tb * S + s]
                    ):
                        k = 4 * n + 3 * n_links
                        work[k], work[k + 1], work[k + 2] = a, b, s
                        work[ec + a] += 1
                        work[er + b] += 1
                        n_links += 1
                        break
        return exact, nfc, nfr, n_links
