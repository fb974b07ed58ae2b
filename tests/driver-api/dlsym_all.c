/* Resolves every name listed in argv[1] (one per line: the link-time names
 * of cuda.h, computed by libcuda/tests/exports.rs) with dlsym() from
 * libcuda.so.1, as the CUDA runtime and frameworks that load the whole
 * driver table do. Then calls, twice, entry points the emulator refuses,
 * through cuda.h's own prototypes and macros (so the per-thread build reaches
 * the _ptsz name): each must return CUDA_ERROR_NOT_SUPPORTED. Prints
 * "dlsym: N found, M missing" and exits 0 only if nothing was missing and
 * every call was refused.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void expect_not_supported(const char *what, CUresult r) {
    if (r != CUDA_ERROR_NOT_SUPPORTED) {
        printf("%s returned %d, expected CUDA_ERROR_NOT_SUPPORTED\n", what, (int)r);
        failures++;
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s NAMES_FILE\n", argv[0]);
        return 2;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("dlopen libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    FILE *names = fopen(argv[1], "r");
    if (!names) {
        perror(argv[1]);
        return 1;
    }
    char line[256];
    unsigned found = 0, missing = 0;
    while (fgets(line, sizeof line, names)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0')
            continue;
        if (dlsym(lib, line)) {
            found++;
        } else {
            printf("missing: %s\n", line);
            missing++;
        }
    }
    fclose(names);
    printf("dlsym: %u found, %u missing\n", found, missing);

    for (int i = 0; i < 2; i++) {
        CUgraphicsResource resource = NULL;
        expect_not_supported("cuGraphicsUnregisterResource",
                             cuGraphicsUnregisterResource(resource));

        CUexternalSemaphore semaphore = NULL;
        CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS params;
        memset(&params, 0, sizeof params);
        expect_not_supported("cuSignalExternalSemaphoresAsync",
                             cuSignalExternalSemaphoresAsync(&semaphore, &params, 1, NULL));

        CUmemGenericAllocationHandle handle = 0;
        CUmulticastObjectProp prop;
        memset(&prop, 0, sizeof prop);
        expect_not_supported("cuMulticastCreate", cuMulticastCreate(&handle, &prop));
    }
    dlclose(lib);
    return missing == 0 && failures == 0 ? 0 : 1;
}
