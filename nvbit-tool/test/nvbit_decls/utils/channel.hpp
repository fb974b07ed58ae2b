// prlx's declaration of NVBit 1.7's utils/channel.hpp (the device-to-host
// channel), as far as the tool uses it. See README.md: not NVBit's file.
#pragma once

#include <pthread.h>
#include <stdint.h>

class ChannelDev {
 public:
  __device__ void push(void *packet, uint32_t nbytes);
  __device__ void flush();

 private:
  int id;
  volatile int *doorbell;
  uint8_t *buff;
  uint8_t *buff_end;
  uint8_t *volatile buff_write_head_ptr;
  uint8_t *volatile buff_write_tail_ptr;
};

class ChannelHost {
 public:
  void init(int id, int buff_size, ChannelDev *ch_dev, void *(*thread_fun)(void *),
            void *args = NULL);
  void destroy(bool dealloc);
  bool is_active();
  uint32_t recv(void *buff, uint32_t max_buff_size);
  pthread_t get_thread();
};
