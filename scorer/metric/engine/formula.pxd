# cython: language_level=3
# C types for formula.py when it is compiled (Cython's pure-Python mode); the .py alone is the code. The
# figures are C doubles computed by the same operations in the same order (setup.py turns contraction off).
cimport cython

cpdef double fmean(double precision, double recall, double alpha) except? -1.0

cpdef double links_fmean(Py_ssize_t m, Py_ssize_t t, Py_ssize_t r, double alpha) except? -1.0

@cython.locals(precision=double, recall=double, f=double, penalty=double)
cpdef tuple figures(Py_ssize_t m, object chunks, Py_ssize_t t, Py_ssize_t r, double alpha, double gamma,
                    double beta, bint penalised)

@cython.locals(best_index=Py_ssize_t, best_m=Py_ssize_t, best_fmean=double, index=Py_ssize_t, m=Py_ssize_t,
               f=double)
cpdef tuple best_by_counts(Py_ssize_t t, object variants, object counts, double alpha)

@cython.locals(k=Py_ssize_t, t=Py_ssize_t, best=Py_ssize_t, m=Py_ssize_t, found=list, fields=tuple)
cpdef list best_scores(object cands, object variants, object counted, double alpha, object record)
