/* Records glibc's allocation calls (malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc, memalign) between alloc_shim_on() and alloc_shim_off(path), preloaded with
 * LD_PRELOAD (scripts/allocations.py builds and drives it). Each call goes to glibc as it
 * came; the record is a fixed array, so recording allocates nothing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

typedef struct { char op; void *ptr; size_t size, alignment; } Call;
static Call calls[4000000];
static size_t count;
static int recording;
static void *(*next_malloc)(size_t);
static void (*next_free)(void *);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static void *(*next_memalign)(size_t, size_t);

static void record(char op, void *ptr, size_t size, size_t alignment) {
    if (!recording) return;
    size_t i = __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);  /* any thread may allocate */
    if (i < sizeof calls / sizeof *calls)  /* else counted, not kept: alloc_shim_off says so */
        calls[i] = (Call){op, ptr, size, alignment};
}

static void find_glibc(void) {
    if (next_malloc) return;
    next_calloc = dlsym(RTLD_NEXT, "calloc");
    next_malloc = dlsym(RTLD_NEXT, "malloc");
    next_free = dlsym(RTLD_NEXT, "free");
    next_realloc = dlsym(RTLD_NEXT, "realloc");
    next_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    next_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    next_memalign = dlsym(RTLD_NEXT, "memalign");
}

void *malloc(size_t size) {
    find_glibc(); void *p = next_malloc(size);
    record('m', p, size, 0); return p;
}
void free(void *p) { find_glibc(); record('f', p, 0, 0); next_free(p); }
void *calloc(size_t n, size_t size) {
    if (!next_calloc) {  /* dlsym's own calloc, before calloc is found: a static pool */
        static char pool[8192]; static size_t used;
        size_t rounded = (n * size + 15) & ~(size_t)15;
        if (rounded > sizeof pool - used) return NULL;
        void *p = pool + used; used += rounded; return p;
    }
    void *p = next_calloc(n, size); record('c', p, n * size, 0); return p;
}
void *realloc(void *old, size_t size) {
    find_glibc(); void *p = next_realloc(old, size);
    if (old && (p || size == 0)) record('f', old, 0, 0);  /* a failed realloc keeps `old` */
    if (p) record('r', p, size, 0);
    return p;
}
int posix_memalign(void **out, size_t alignment, size_t size) {
    find_glibc(); int failed = next_posix_memalign(out, alignment, size);
    if (!failed) record('a', *out, size, alignment);
    return failed;
}
void *aligned_alloc(size_t alignment, size_t size) {
    find_glibc(); void *p = next_aligned_alloc(alignment, size);
    record('a', p, size, alignment); return p;
}
void *memalign(size_t alignment, size_t size) {
    find_glibc(); void *p = next_memalign(alignment, size);
    record('a', p, size, alignment); return p;
}

void alloc_shim_on(void) { count = 0; recording = 1; }

/* A mark in the record (op '#', `label` as its size): where a case begins. */
void alloc_shim_mark(size_t label) { record('#', 0, label, 0); }

/* Writes the calls recorded, one per line: op, address (hex), size, alignment; returns how
 * many were made (more than written where the record overflowed). */
size_t alloc_shim_off(const char *path) {
    recording = 0;
    size_t kept = count < sizeof calls / sizeof *calls ? count : sizeof calls / sizeof *calls;
    FILE *out = fopen(path, "w");
    if (!out) return (size_t)-1;
    for (size_t i = 0; i < kept; i++)
        fprintf(out, "%c %lx %zu %zu\n", calls[i].op, (unsigned long)(uintptr_t)calls[i].ptr,
                calls[i].size, calls[i].alignment);
    fclose(out);
    return count;
}
