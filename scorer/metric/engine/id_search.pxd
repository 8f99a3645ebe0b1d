# cython: language_level=3
# C types for id_search.py when it is compiled (Cython's pure-Python mode); the .py alone is the code.
cimport cython

cdef Py_ssize_t UNSET
cdef Py_ssize_t NONE
cdef Py_ssize_t MAX_POSITION_PAIRS

@cython.locals(a=Py_ssize_t, b=Py_ssize_t, mid=Py_ssize_t, n=Py_ssize_t)
cdef Py_ssize_t _count(int[::1] work, Py_ssize_t lo, Py_ssize_t hi, int x) noexcept

@cython.locals(p=Py_ssize_t)
cdef Py_ssize_t _nth(int[::1] order, Py_ssize_t lo, Py_ssize_t hi, int x, Py_ssize_t k) noexcept

@cython.locals(k=Py_ssize_t, x=int, p=Py_ssize_t)
cdef Py_ssize_t _rank(int[::1] order, Py_ssize_t i) noexcept

@cython.locals(x=int, p=Py_ssize_t)
cdef Py_ssize_t _first(int[::1] order, Py_ssize_t lo, Py_ssize_t i) noexcept

@cython.locals(k=Py_ssize_t)
cdef void _tree_add(long long[::1] mem, Py_ssize_t tree, Py_ssize_t r, Py_ssize_t j, Py_ssize_t v) noexcept

@cython.locals(total=Py_ssize_t, k=Py_ssize_t)
cdef Py_ssize_t _tree_sum(long long[::1] mem, Py_ssize_t tree, Py_ssize_t r, Py_ssize_t j) noexcept


cdef class _State:
    cdef public Py_ssize_t n, n_stages, n_groups, w1, w2, base, start_bound, budget, nodes, best_cost
    cdef public bint exact, lex_first, has_best, best_is_lex


cdef class _Regions:
    cdef public Py_ssize_t rest, need, avail, group_of, group_a, ref_rank, group_q, table_at, group_r, at_c, used
    cdef public Py_ssize_t tree, twin, first_c, first_r, chosen_j, chosen_s, best_j, best_s, frame, choice_at, dpos
    cdef public Py_ssize_t opt_at, opt_n, fj


cdef class IdSearch:
    cdef long long[::1] mem

    @cython.locals(grown=object)
    cdef long long[::1] _room(self, Py_ssize_t n)

    @cython.locals(t=Py_ssize_t, r=Py_ssize_t, n_stages=Py_ssize_t, w1=Py_ssize_t, w2=Py_ssize_t, fc_id=Py_ssize_t,
                   fr_id=Py_ssize_t, lk=Py_ssize_t, fj=Py_ssize_t, fs=Py_ssize_t, is_group=Py_ssize_t,
                   deg_c=Py_ssize_t, deg_r=Py_ssize_t, partners=Py_ssize_t, dpos=Py_ssize_t, opt_at=Py_ssize_t,
                   opt_n=Py_ssize_t, opts=Py_ssize_t, mem="long long[::1]", k=Py_ssize_t, n=Py_ssize_t,
                   n_opts=Py_ssize_t, n_forced=Py_ssize_t, i=Py_ssize_t, x=int, cx=Py_ssize_t, rx=Py_ssize_t,
                   n_partners=Py_ssize_t, b=int, s=Py_ssize_t, start=Py_ssize_t, j=Py_ssize_t, y=int)
    cpdef object align(self, int[::1] order, int[::1] work, Py_ssize_t nc, Py_ssize_t nr, Py_ssize_t nfc,
                       Py_ssize_t nfr, Py_ssize_t n_links, list target, Py_ssize_t budget)

    @cython.locals(mem="long long[::1]", chunks=Py_ssize_t, last=Py_ssize_t, d=Py_ssize_t, i=Py_ssize_t,
                   j=Py_ssize_t)
    cdef Py_ssize_t _chunks(self, Py_ssize_t t, Py_ssize_t fj, Py_ssize_t chosen, Py_ssize_t dpos, Py_ssize_t n)

    @cython.locals(mem="long long[::1]", rest=Py_ssize_t, need=Py_ssize_t, avail=Py_ssize_t, mark=Py_ssize_t,
                   prefix_all=Py_ssize_t, prefix_before=Py_ssize_t, group_of=Py_ssize_t, group_a=Py_ssize_t,
                   ref_rank=Py_ssize_t, group_q=Py_ssize_t, table_at=Py_ssize_t,
                   group_r=Py_ssize_t, at_c=Py_ssize_t, used=Py_ssize_t, tree=Py_ssize_t, twin=Py_ssize_t,
                   first_c=Py_ssize_t, first_r=Py_ssize_t, chosen_j=Py_ssize_t, chosen_s=Py_ssize_t,
                   best_j=Py_ssize_t, best_s=Py_ssize_t, frame=Py_ssize_t, choice_at=Py_ssize_t, choices=Py_ssize_t,
                   total_choices=Py_ssize_t, d=Py_ssize_t, s=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t,
                   acc=Py_ssize_t, crossings=Py_ssize_t, base_chunks=Py_ssize_t, displacement=Py_ssize_t,
                   q=Py_ssize_t, decided_before=bint, base=Py_ssize_t, i_done=Py_ssize_t, o=Py_ssize_t,
                   p=Py_ssize_t, above_before=Py_ssize_t, below_after=Py_ssize_t, here=Py_ssize_t,
                   n_groups=Py_ssize_t, start_bound=Py_ssize_t, table_end=Py_ssize_t, g=Py_ssize_t, x=int,
                   c=Py_ssize_t, e=Py_ssize_t, rr=Py_ssize_t, tab=Py_ssize_t, a=Py_ssize_t, cell=Py_ssize_t,
                   skip=Py_ssize_t, link=Py_ssize_t, best=Py_ssize_t, state=_State, regions=_Regions, costs=Py_ssize_t,
                   at=Py_ssize_t,
                   greedy=Py_ssize_t, links=Py_ssize_t, k=Py_ssize_t)
    cdef object _search(self, int[::1] order, Py_ssize_t t, Py_ssize_t r, Py_ssize_t n, Py_ssize_t n_stages,
                        list target, Py_ssize_t w1, Py_ssize_t w2, Py_ssize_t fj, Py_ssize_t fs,
                        Py_ssize_t is_group, Py_ssize_t dpos, Py_ssize_t opt_at, Py_ssize_t opt_n, Py_ssize_t free,
                        Py_ssize_t budget)

    @cython.locals(mem="long long[::1]", n=Py_ssize_t,
                   cost=Py_ssize_t, bound_left=Py_ssize_t, depth=Py_ssize_t, d=Py_ssize_t, fr=Py_ssize_t,
                   inc=Py_ssize_t, j=Py_ssize_t, s=Py_ssize_t, old=Py_ssize_t, delta=Py_ssize_t,
                   old_q=Py_ssize_t, grp=Py_ssize_t, i=Py_ssize_t, at=Py_ssize_t, count=Py_ssize_t, k=Py_ssize_t,
                   has_limit=bint, limit=Py_ssize_t, o=Py_ssize_t, key=Py_ssize_t, e=Py_ssize_t)
    cdef Py_ssize_t _dfs(self, Py_ssize_t t, Py_ssize_t r, _State state, _Regions g, bint greedy) except? -3

    @cython.locals(mem="long long[::1]", x=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, d=Py_ssize_t)
    cdef void _fresh(self, Py_ssize_t t, Py_ssize_t r, _State state, _Regions g)

    @cython.locals(mem="long long[::1]", n=Py_ssize_t, n_stages=Py_ssize_t, w1=Py_ssize_t, w2=Py_ssize_t,
                   fr=Py_ssize_t, at=Py_ssize_t, e=Py_ssize_t, i=Py_ssize_t, after=Py_ssize_t, skip_inc=Py_ssize_t,
                   has_limit=bint, limit=Py_ssize_t, floor=Py_ssize_t, short=Py_ssize_t, only_stage=Py_ssize_t,
                   total_need=Py_ssize_t, x=Py_ssize_t, n_chosen=Py_ssize_t, grp=Py_ssize_t, now=Py_ssize_t,
                   unlinked=Py_ssize_t, tab=Py_ssize_t, rr=Py_ssize_t, a=Py_ssize_t, q=Py_ssize_t,
                   at_state=Py_ssize_t, found=Py_ssize_t, before=Py_ssize_t, o=Py_ssize_t, p=Py_ssize_t,
                   j=Py_ssize_t, s=Py_ssize_t, static=Py_ssize_t, delta=Py_ssize_t, later=Py_ssize_t,
                   inc=Py_ssize_t, c=Py_ssize_t, key_v=Py_ssize_t, key_j=Py_ssize_t, v0=Py_ssize_t, v1=Py_ssize_t,
                   v2=Py_ssize_t, v3=Py_ssize_t, f=Py_ssize_t, h=Py_ssize_t)
    cdef void _choices(self, Py_ssize_t t, Py_ssize_t r, _State state, _Regions g, bint greedy,
                       Py_ssize_t d, Py_ssize_t cost, Py_ssize_t bound_left)
