# cython: language_level=3
# C types for word_split.py when it is compiled (Cython's pure-Python mode); the .py alone is the code.
cimport cython

cdef bint in_alphabet(Py_UCS4 c) noexcept

cdef bint is_word(Py_UCS4 c) noexcept

cdef unsigned long long _FNV_OFFSET
cdef unsigned long long _FNV_PRIME
cdef unsigned long long _MASK64

cdef unsigned int lower_code(unsigned int c) noexcept

@cython.locals(ch=Py_UCS4)
cpdef bint all_in_alphabet(str text) except -1


cdef class WordSplitter:
    cdef public list types
    cdef int[::1] slots
    cdef unsigned long long[::1] hashes
    cdef Py_ssize_t mask

    @cython.locals(ch=Py_UCS4, c="unsigned int", i=Py_ssize_t, start=Py_ssize_t, h="unsigned long long", tokens=list)
    cpdef list split(self, str text)

    @cython.locals(slot=Py_ssize_t, token=str)
    cdef str _token(self, str text, Py_ssize_t start, Py_ssize_t end, unsigned long long h)

    @cython.locals(size=Py_ssize_t, mask=Py_ssize_t, old=Py_ssize_t, t=int, h="unsigned long long", slot=Py_ssize_t)
    cdef void _grow(self) except *

cdef Py_ssize_t _home(unsigned long long h, Py_ssize_t mask) noexcept

@cython.locals(i=Py_ssize_t, k=Py_ssize_t)
cdef bint _same(str token, str text, Py_ssize_t start, Py_ssize_t end) noexcept
