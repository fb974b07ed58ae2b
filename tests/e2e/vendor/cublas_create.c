/* Loads the real cuBLAS (PyPI's nvidia-cublas wheel) with dlopen, as PyTorch
 * does, and creates and destroys a handle: cublasCreate initialises cudart
 * inside cuBLAS, frees a NULL workspace and reads cuBLAS's device constants
 * (a variable of a SASS-only module). Prints "cublas_create ok". */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*create_fn)(void **);
typedef int (*destroy_fn)(void *);

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "libcublas.so.13";
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("dlopen %s: %s\n", name, dlerror());
        return 2;
    }
    create_fn create = (create_fn)dlsym(lib, "cublasCreate_v2");
    destroy_fn destroy = (destroy_fn)dlsym(lib, "cublasDestroy_v2");
    if (!create || !destroy) {
        printf("cublasCreate_v2/cublasDestroy_v2 not found\n");
        return 2;
    }
    void *handle = NULL;
    int status = create(&handle);
    if (status != 0) {
        printf("cublasCreate returned %d\n", status);
        return 1;
    }
    status = destroy(handle);
    if (status != 0) {
        printf("cublasDestroy returned %d\n", status);
        return 1;
    }
    printf("cublas_create ok\n");
    return 0;
}
