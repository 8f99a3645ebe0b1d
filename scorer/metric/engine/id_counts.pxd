# cython: language_level=3
# C types for id_counts.py when it is compiled (Cython's pure-Python mode); the .py alone is the code.
cimport cython

cdef Py_ssize_t MASK_WORDS

@cython.locals(h="unsigned int", bit="unsigned long long")
cdef void _mark(unsigned long long[::1] mask, Py_ssize_t t, Py_ssize_t k) noexcept

@cython.locals(end_i=Py_ssize_t, end_j=Py_ssize_t)
cdef bint _meet(int[::1] data, Py_ssize_t i, Py_ssize_t ni, Py_ssize_t j, Py_ssize_t nj) noexcept

cdef class KeyTable:
    cdef public dict ids
    cdef public list tokens
    cdef public object intern
    cdef public Py_ssize_t n_stages, n_tokens, n_data
    cdef int[::1] start, length, data, work, tally
    cdef unsigned long long[::1] mask

    @cython.locals(t=Py_ssize_t, S=Py_ssize_t, s=Py_ssize_t, needed=Py_ssize_t, n_data=Py_ssize_t, k=int,
                   keys=list)
    cpdef Py_ssize_t add(self, str token, list keys_by_stage) except -1

    @cython.locals(numbered=list)
    cpdef Py_ssize_t add_keys(self, str token, list keys_by_stage, dict key_ids) except -1

    @cython.locals(ids=dict, found=dict)
    cpdef list unknown(self, object texts)

    @cython.locals(S=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, t=Py_ssize_t, at=Py_ssize_t,
                   size=Py_ssize_t, kept=list, ids=list, sv="int[::1]", lv="int[::1]", dv="int[::1]")
    cpdef tuple export(self, object skip)

    @cython.locals(S=Py_ssize_t, n=Py_ssize_t, i=Py_ssize_t, k=Py_ssize_t, ids=dict, kv="int[::1]",
                   sv="int[::1]", lv="int[::1]", mask="unsigned long long[::1]")
    cpdef bint restore(self, list tokens, bytes start, bytes length, bytes data, Py_ssize_t n_keys) except -1

    @cython.locals(nc=Py_ssize_t, found=list)
    cpdef list counts_each(self, object cand, object refs)

    @cython.locals(i=Py_ssize_t)
    cdef Py_ssize_t _place(self, object tokens, Py_ssize_t at) except -1

    @cython.locals(nc=Py_ssize_t)
    cpdef object graph(self, object cand, object ref)

    @cython.locals(exact=Py_ssize_t, nfc=Py_ssize_t, nfr=Py_ssize_t, n_links=Py_ssize_t, fc=Py_ssize_t,
                   fr=Py_ssize_t, a=Py_ssize_t, b=Py_ssize_t, k=Py_ssize_t, w="int[::1]", t=list)
    cdef tuple _fields(self, object cand, object ref, Py_ssize_t nc, tuple found)

    @cython.locals(nc=Py_ssize_t, nr=Py_ssize_t, nfc=Py_ssize_t, nfr=Py_ssize_t, n_links=Py_ssize_t,
                   n=Py_ssize_t, fc=Py_ssize_t, lc=Py_ssize_t, ec=Py_ssize_t, fr=Py_ssize_t, lr=Py_ssize_t,
                   er=Py_ssize_t, links=Py_ssize_t, after=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t,
                   t=Py_ssize_t, m=Py_ssize_t, chunks=Py_ssize_t, last=Py_ssize_t, clear=bint, w="int[::1]",
                   tally="int[::1]")
    cpdef object forced_or_graph(self, object cand, object ref)

    @cython.locals(i=Py_ssize_t, a=Py_ssize_t, wholly=bint, w="int[::1]", tally="int[::1]")
    cdef bint _wholly_free(self, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t free, Py_ssize_t surplus,
                           Py_ssize_t n_free) except -1

    @cython.locals(S=Py_ssize_t, n=Py_ssize_t, lc=Py_ssize_t, ec=Py_ssize_t, lr=Py_ssize_t, er=Py_ssize_t,
                   exact=Py_ssize_t, nfc=Py_ssize_t, nfr=Py_ssize_t, n_links=Py_ssize_t, s=Py_ssize_t,
                   k=Py_ssize_t, m=int, counts=list, work="int[::1]")
    cdef object _counts(self, Py_ssize_t nc, Py_ssize_t nr)

    @cython.locals(S=Py_ssize_t, n=Py_ssize_t, i=Py_ssize_t, fc=Py_ssize_t, lc=Py_ssize_t, ec=Py_ssize_t,
                   fr=Py_ssize_t, lr=Py_ssize_t, er=Py_ssize_t, exact=Py_ssize_t, nfc=Py_ssize_t,
                   nfr=Py_ssize_t, n_links=Py_ssize_t, a=Py_ssize_t, b=Py_ssize_t, ta=Py_ssize_t,
                   tb=Py_ssize_t, w=Py_ssize_t, s=Py_ssize_t, k=Py_ssize_t,
                   tally="int[::1]", work="int[::1]", start="int[::1]", length="int[::1]",
                   mask="unsigned long long[::1]", data="int[::1]")
    cdef object _links(self, Py_ssize_t nc, Py_ssize_t nr)
