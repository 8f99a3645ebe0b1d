# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Rule 1's per-stage link counts on interned token ids: the optional compiled core.

The pure-Python engine (:mod:`scorer.metric.engine.links` and :mod:`scorer.metric.engine.counting`) is
the definition. This module computes the same numbers, step for step, for
the shapes nearly every pair has: a leading exact stage settled by ``min``
counts, then components of the link graph that are single links or stars.
For anything else (a general component, stages in another order, very long
texts) it answers None and the caller uses the pure engine. The test suite
and CI compare the two on every pair they score.
"""
from libc.stdlib cimport free, malloc, qsort, realloc
from libc.stdint cimport uint64_t

cdef enum:
    MASK_WORDS = 4  # a token's key ids hashed into 256 bits: two tokens whose bits miss share no key

#: Above this many (free candidate type, free reference type) pairs the pure engine's key index is cheaper.
MAX_TYPE_PAIRS = 65536


cdef int _compare(const void* a, const void* b) noexcept nogil:
    cdef int x = (<const int*>a)[0]
    cdef int y = (<const int*>b)[0]
    return (x > y) - (x < y)


cdef inline bint _meet(const int* a, int na, const int* b, int nb) noexcept nogil:
    """Whether two sorted arrays share a value."""
    cdef int i = 0, j = 0
    while i < na and j < nb:
        if a[i] == b[j]:
            return True
        if a[i] < b[j]:
            i += 1
        else:
            j += 1
    return False


cdef inline bint _overlap(const uint64_t* a, const uint64_t* b) noexcept nogil:
    return ((a[0] & b[0]) | (a[1] & b[1]) | (a[2] & b[2]) | (a[3] & b[3])) != 0


cdef inline int _run(const int* values, int n, int* at) noexcept nogil:
    """How many values equal ``values[at[0]]`` follow in the sorted array; moves ``at[0]`` past them."""
    cdef int first = values[at[0]], count = 0
    while at[0] < n and values[at[0]] == first:
        at[0] += 1
        count += 1
    return count


cdef int _find(int* parent, int x) noexcept nogil:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


cdef class KeyTable:
    """The sorted key ids of every interned token at each stage after the leading exact one.

    ``add(token, keys)`` interns a token from one sorted list of key ids per
    stage and returns its id; ``counts(cand, ref)`` takes two lists of tokens
    and interns a token it has not seen by calling ``intern(token)``, which
    must call :meth:`add` and return the id.
    """

    cdef readonly dict ids
    cdef public object intern
    cdef int n_stages
    cdef int n_tokens
    cdef int cap_tokens
    cdef int* start
    cdef int* length
    cdef uint64_t* mask
    cdef int* data
    cdef Py_ssize_t n_data
    cdef Py_ssize_t cap_data

    def __cinit__(self, int n_stages):
        self.ids = {}
        self.n_stages = n_stages
        self.cap_tokens = 1024
        self.cap_data = 16384
        self.start = <int*>malloc(sizeof(int) * self.cap_tokens * (n_stages + 1))
        self.length = <int*>malloc(sizeof(int) * self.cap_tokens * (n_stages + 1))
        self.mask = <uint64_t*>malloc(sizeof(uint64_t) * MASK_WORDS * self.cap_tokens)
        self.data = <int*>malloc(sizeof(int) * self.cap_data)
        if not (self.start and self.length and self.mask and self.data):
            raise MemoryError()

    def __dealloc__(self):
        free(self.start)
        free(self.length)
        free(self.mask)
        free(self.data)

    def add(self, str token_text, list keys_by_stage) -> int:
        """Intern a token: ``keys_by_stage[s]`` is its sorted list of key ids at stage ``s``."""
        if token_text in self.ids:
            return self.ids[token_text]
        cdef int s, k, token = self.n_tokens
        cdef Py_ssize_t needed = self.n_data
        cdef uint64_t bits[MASK_WORDS]
        cdef unsigned int h
        cdef list keys
        if len(keys_by_stage) != self.n_stages:
            raise ValueError("one list of key ids per stage is needed")
        for keys in keys_by_stage:
            needed += len(keys)
        if token == self.cap_tokens:
            self._grow_tokens()
        if needed > self.cap_data:
            self._grow_data(needed)
        for k in range(MASK_WORDS):
            bits[k] = 0
        for s in range(self.n_stages):
            keys = keys_by_stage[s]
            self.start[token * self.n_stages + s] = <int>self.n_data
            self.length[token * self.n_stages + s] = <int>len(keys)
            for k in keys:
                self.data[self.n_data] = k
                self.n_data += 1
                h = (<unsigned int>k * 2654435761u) >> 24
                bits[(h >> 6) & (MASK_WORDS - 1)] |= (<uint64_t>1) << (h & 63)
        for k in range(MASK_WORDS):
            self.mask[token * MASK_WORDS + k] = bits[k]
        self.n_tokens += 1
        self.ids[token_text] = token
        return token

    cdef void _grow_tokens(self) except *:
        cdef int cap = self.cap_tokens * 2
        cdef int* start = <int*>realloc(self.start, sizeof(int) * cap * (self.n_stages + 1))
        if not start:
            raise MemoryError()
        self.start = start
        cdef int* length = <int*>realloc(self.length, sizeof(int) * cap * (self.n_stages + 1))
        if not length:
            raise MemoryError()
        self.length = length
        cdef uint64_t* mask = <uint64_t*>realloc(self.mask, sizeof(uint64_t) * MASK_WORDS * cap)
        if not mask:
            raise MemoryError()
        self.mask = mask
        self.cap_tokens = cap

    cdef void _grow_data(self, Py_ssize_t needed) except *:
        cdef Py_ssize_t cap = self.cap_data
        while cap < needed:
            cap *= 2
        cdef int* data = <int*>realloc(self.data, sizeof(int) * cap)
        if not data:
            raise MemoryError()
        self.data = data
        self.cap_data = cap

    def counts(self, list cand, list ref):
        """Links of each stage (the exact stage first) under rule 1, or None where the pure engine must answer.

        ``cand`` and ``ref`` are non-empty lists of tokens interned with :meth:`add`.
        """
        cdef Py_ssize_t nc = len(cand), nr = len(ref), i
        cdef dict ids = self.ids
        cdef int* buffer = <int*>malloc(sizeof(int) * 6 * (nc + nr))
        if not buffer:
            raise MemoryError()
        cdef object found
        try:
            for i in range(nc):
                found = ids.get(cand[i])
                buffer[i] = self.intern(cand[i]) if found is None else found
            for i in range(nr):
                found = ids.get(ref[i])
                buffer[nc + i] = self.intern(ref[i]) if found is None else found
            return self._counts(buffer, <int>nc, <int>nr)
        finally:
            free(buffer)

    cdef object _counts(self, int* buffer, int nc, int nr):
        cdef int S = self.n_stages
        cdef int* a = buffer
        cdef int* b = buffer + nc
        cdef int* fc_id = buffer + nc + nr          # free candidate types and their counts
        cdef int* fc_n = fc_id + nc
        cdef int* fr_id = fc_n + nc                 # free reference types and their counts
        cdef int* fr_n = fr_id + nr
        cdef int i = 0, j = 0, x, na, nb, nfc = 0, nfr = 0, exact = 0
        qsort(a, nc, sizeof(int), _compare)
        qsort(b, nr, sizeof(int), _compare)
        # leading exact stage: min counts of every shared type; what is left over is free
        while i < nc or j < nr:
            if j >= nr or (i < nc and a[i] < b[j]):
                fc_id[nfc] = a[i]
                fc_n[nfc] = _run(a, nc, &i)
                nfc += 1
            elif i >= nc or b[j] < a[i]:
                fr_id[nfr] = b[j]
                fr_n[nfr] = _run(b, nr, &j)
                nfr += 1
            else:
                x = a[i]
                na = _run(a, nc, &i)
                nb = _run(b, nr, &j)
                exact += min(na, nb)
                if na > nb:
                    fc_id[nfc] = x
                    fc_n[nfc] = na - nb
                    nfc += 1
                elif nb > na:
                    fr_id[nfr] = x
                    fr_n[nfr] = nb - na
                    nfr += 1
        counts = [exact] + [0] * S
        if nfc == 0 or nfr == 0 or S == 0:
            return counts
        if <Py_ssize_t>nfc * nfr > MAX_TYPE_PAIRS:
            return None
        return self._later_stages(counts, fc_id, fc_n, nfc, fr_id, fr_n, nfr)

    cdef object _later_stages(self, list counts, int* fc_id, int* fc_n, int nfc, int* fr_id, int* fr_n, int nfr):
        cdef int S = self.n_stages
        cdef int i, j, s, k, n_links = 0, ta, tb, root, centre, n
        cdef int* links = <int*>malloc(sizeof(int) * 3 * nfc * nfr)
        cdef int* parent = <int*>malloc(sizeof(int) * (nfc + nfr))
        cdef int* size = <int*>malloc(sizeof(int) * (nfc + nfr))
        cdef int* same_a = <int*>malloc(sizeof(int) * (nfc + nfr))
        cdef int* same_b = <int*>malloc(sizeof(int) * (nfc + nfr))
        if not (links and parent and size and same_a and same_b):
            free(links); free(parent); free(size); free(same_a); free(same_b)
            raise MemoryError()
        try:
            # links: each (free candidate type, free reference type) pair with the first stage whose keys meet
            for i in range(nfc):
                ta = fc_id[i]
                for j in range(nfr):
                    tb = fr_id[j]
                    if not _overlap(self.mask + ta * MASK_WORDS, self.mask + tb * MASK_WORDS):
                        continue
                    for s in range(S):
                        if _meet(self.data + self.start[ta * S + s], self.length[ta * S + s],
                                 self.data + self.start[tb * S + s], self.length[tb * S + s]):
                            links[3 * n_links] = i
                            links[3 * n_links + 1] = j
                            links[3 * n_links + 2] = s
                            n_links += 1
                            break
            if n_links == 0:
                return counts
            # components (union-find on candidate nodes 0..nfc-1 and reference nodes nfc..)
            for k in range(nfc + nfr):
                parent[k] = k
                size[k] = 0
                same_a[k] = -2
                same_b[k] = -2
            for k in range(n_links):
                i = _find(parent, links[3 * k])
                j = _find(parent, nfc + links[3 * k + 1])
                if i != j:
                    parent[max(i, j)] = min(i, j)
            for k in range(n_links):
                root = _find(parent, links[3 * k])
                size[root] += 1
                i = links[3 * k]
                j = links[3 * k + 1]
                same_a[root] = i if same_a[root] == -2 or same_a[root] == i else -1
                same_b[root] = j if same_b[root] == -2 or same_b[root] == j else -1
            for k in range(nfc + nfr):
                if size[k] > 1 and same_a[k] == -1 and same_b[k] == -1:
                    return None  # a general component: the pure engine's maximum-weight flow
            for k in range(n_links):
                root = _find(parent, links[3 * k])
                if size[root] == 1:
                    s = links[3 * k + 2]
                    counts[s + 1] += min(fc_n[links[3 * k]], fr_n[links[3 * k + 1]])
            # stars: the centre's tokens go to the leaves of the earliest stage first
            for root in range(nfc + nfr):
                if size[root] < 2:
                    continue
                centre = fc_n[same_a[root]] if same_a[root] >= 0 else fr_n[same_b[root]]
                for s in range(S):
                    for k in range(n_links):
                        if links[3 * k + 2] != s or _find(parent, links[3 * k]) != root:
                            continue
                        n = min(centre, fr_n[links[3 * k + 1]] if same_a[root] >= 0 else fc_n[links[3 * k]])
                        centre -= n
                        counts[s + 1] += n
            return counts
        finally:
            free(links); free(parent); free(size); free(same_a); free(same_b)
