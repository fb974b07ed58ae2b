; A kernel with nothing to record: the pass leaves its attributes alone.
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @plain(ptr addrspace(1) %out) #0 {
  store i32 1, ptr addrspace(1) %out
  ret void
}

; KEPT: attributes #0 = { "amdgpu-no-workitem-id-y" }
attributes #0 = { "amdgpu-no-workitem-id-y" }
