# cython: language_level=3
# C types for word_split.py when it is compiled (Cython's pure-Python mode); the .py alone is the code.
cimport cython

cdef bint in_alphabet(Py_UCS4 c) noexcept

cdef bint is_word(Py_UCS4 c) noexcept

@cython.locals(ch=Py_UCS4)
cpdef bint all_in_alphabet(str text) except -1

@cython.locals(ch=Py_UCS4, i=Py_ssize_t, start=Py_ssize_t, low=str, tokens=list)
cpdef list split_words(str text)
