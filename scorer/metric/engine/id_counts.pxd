# cython: language_level=3
# C types for id_counts.py when it is compiled (Cython's pure-Python mode); the .py alone is the code.
cimport cython

cdef Py_ssize_t MASK_WORDS
cdef unsigned int _HASH

@cython.locals(end_i=Py_ssize_t, end_j=Py_ssize_t, x=int, y=int)
cdef bint _meet(int[::1] data, Py_ssize_t i, Py_ssize_t ni, Py_ssize_t j, Py_ssize_t nj) noexcept

@cython.locals(i=Py_ssize_t, j=Py_ssize_t, x=int, n=Py_ssize_t, root=Py_ssize_t, end=Py_ssize_t)
cdef void _sort(int[::1] work, Py_ssize_t lo, Py_ssize_t hi) noexcept

@cython.locals(x=int, child=Py_ssize_t)
cdef void _sift(int[::1] work, Py_ssize_t lo, Py_ssize_t root, Py_ssize_t n) noexcept

@cython.locals(n=Py_ssize_t)
cdef Py_ssize_t _run(int[::1] work, Py_ssize_t i, Py_ssize_t end, int x) noexcept

cdef Py_ssize_t _find(int[::1] work, Py_ssize_t parent, Py_ssize_t x) noexcept

cdef class KeyTable:
    cdef public dict ids
    cdef public object intern
    cdef public Py_ssize_t n_stages
    cdef public Py_ssize_t n_tokens
    cdef public Py_ssize_t n_data
    cdef int[::1] start
    cdef int[::1] length
    cdef unsigned long long[::1] mask
    cdef int[::1] data
    cdef int[::1] work
    cdef int[::1] order

    @cython.locals(t=Py_ssize_t, S=Py_ssize_t, s=Py_ssize_t, needed=Py_ssize_t, n_data=Py_ssize_t, k=int,
                   keys=list)
    cpdef Py_ssize_t add(self, str token, list keys_by_stage) except -1

    @cython.locals(numbered=list, stage_ids=list)
    cpdef Py_ssize_t add_keys(self, str token, list keys_by_stage, dict key_ids) except -1

    @cython.locals(S=Py_ssize_t, t=Py_ssize_t, s=Py_ssize_t, k=Py_ssize_t, tokens=list, kept=list)
    cpdef tuple export(self, object skip)

    @cython.locals(S=Py_ssize_t, n=Py_ssize_t, n_data=Py_ssize_t, i=Py_ssize_t, a=Py_ssize_t, b=Py_ssize_t,
                   k=Py_ssize_t, t=Py_ssize_t, s=Py_ssize_t, ids=dict, kv="int[::1]", sv="int[::1]", lv="int[::1]")
    cpdef bint restore(self, list tokens, bytes start, bytes length, bytes data, Py_ssize_t n_keys) except -1

    @cython.locals(h="unsigned int", bit="unsigned long long")
    cdef void _mark(self, Py_ssize_t t, int k) noexcept

    cpdef object counts(self, list cand, list ref)

    @cython.locals(nc=Py_ssize_t, nr=Py_ssize_t, work="int[::1]", found=list)
    cpdef list counts_each(self, object cand, object refs)

    @cython.locals(nc=Py_ssize_t, nr=Py_ssize_t, k=Py_ssize_t, order="int[::1]", work="int[::1]", nfc=Py_ssize_t,
                   nfr=Py_ssize_t, n_links=Py_ssize_t, counts=list)

    @cython.locals(n=Py_ssize_t, i=Py_ssize_t, ids=dict)
    cdef void _place(self, object tokens, Py_ssize_t at) except *

    @cython.locals(exact=Py_ssize_t, nfc=Py_ssize_t, nfr=Py_ssize_t, counts=list, n_links=Py_ssize_t)
    cdef tuple _rule1(self, int[::1] work, Py_ssize_t nc, Py_ssize_t nr)

    @cython.locals(fc_id=Py_ssize_t, fc_n=Py_ssize_t, fr_id=Py_ssize_t, fr_n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t,
                   end_c=Py_ssize_t, end_r=Py_ssize_t, nfc=Py_ssize_t, nfr=Py_ssize_t, exact=Py_ssize_t, x=int,
                   na=Py_ssize_t, nb=Py_ssize_t)
    cdef (Py_ssize_t, Py_ssize_t, Py_ssize_t) _exact_stage(self, int[::1] work, Py_ssize_t nc, Py_ssize_t nr)

    @cython.locals(needed=Py_ssize_t)
    cdef int[::1] _scratch(self, Py_ssize_t nc, Py_ssize_t nr, Py_ssize_t nfc, Py_ssize_t nfr)

    @cython.locals(S=Py_ssize_t, start="int[::1]", length="int[::1]", mask="unsigned long long[::1]",
                   data="int[::1]", fc_id=Py_ssize_t, fr_id=Py_ssize_t, links=Py_ssize_t, n_links=Py_ssize_t,
                   i=Py_ssize_t, j=Py_ssize_t, s=Py_ssize_t, ta=Py_ssize_t, tb=Py_ssize_t)
    cdef Py_ssize_t _type_links(self, int[::1] work, Py_ssize_t nc, Py_ssize_t nr, Py_ssize_t nfc,
                                Py_ssize_t nfr) except -1

    @cython.locals(S=Py_ssize_t, fc_n=Py_ssize_t, fr_n=Py_ssize_t,
                   links=Py_ssize_t, parent=Py_ssize_t, size=Py_ssize_t, same_a=Py_ssize_t, same_b=Py_ssize_t,
                   n_links=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, s=Py_ssize_t,
                   root=Py_ssize_t, by_cand=bint, centre=Py_ssize_t, leaf=Py_ssize_t, n=Py_ssize_t)
    cdef object _later_stages(self, list counts, int[::1] work, Py_ssize_t nc, Py_ssize_t nr, Py_ssize_t nfc,
                              Py_ssize_t nfr, Py_ssize_t n_links)
