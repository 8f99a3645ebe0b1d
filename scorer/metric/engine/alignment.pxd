# cython: language_level=3
# C types for alignment.py when it is compiled (Cython's pure-Python mode); the .py alone is the code.
# Costs stay Python integers: they can exceed 64 bits on long texts.
cimport cython

cdef class _Search:
    cdef public object cand, ref, w1, w2, base, start_bound, bound_left, best
    cdef public list target, order, options, avail, any_avail, avail_after, tables, ref_rank
    cdef public list need, chosen_refs, group_q, at, last_twin, used, group_at
    cdef public dict forced_at
    cdef public Py_ssize_t budget, nodes, n_twins
    cdef public bint exact, lex_first, greedy

    @cython.locals(n=Py_ssize_t, d=Py_ssize_t, k=Py_ssize_t, j=Py_ssize_t, s=Py_ssize_t, i=Py_ssize_t,
                   g=Py_ssize_t, stack=list, frame=list, options_here=list, chosen=list, need=list,
                   used=list, chosen_refs=list, last_twin=list, at=list, group_q=list, group_at=list,
                   order=list, ref_rank=list, twin=Py_ssize_t)
    cpdef object _dfs(self, bint greedy, object start)

    @cython.locals(i=Py_ssize_t, j=Py_ssize_t, s=Py_ssize_t, x=Py_ssize_t, g=Py_ssize_t, a=Py_ssize_t,
                   q=Py_ssize_t, only_stage=Py_ssize_t, n_chosen=Py_ssize_t, need=list, left=tuple,
                   found=list, short=list, table=list, twin=Py_ssize_t)
    cdef list _choices(self, Py_ssize_t d, object cost)

@cython.locals(cpos=dict, rpos=dict, forced=dict, options=dict, fixed=list, rest=list, groups=list,
               component=list)
cpdef object align(object cand, object ref, object key_functions, object budget=*, object graph=*,
                   object target=*)

@cython.locals(at=dict)
cpdef Py_ssize_t chunk_count(object links) except -1

@cython.locals(seen=list, total=Py_ssize_t)
cpdef Py_ssize_t crossings(object pairs) except -1

@cython.locals(positions=dict, i=Py_ssize_t)
cpdef dict _positions(object tokens)
