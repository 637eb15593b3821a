/* mlx-arm C API (mlx-c compatible). Custom readers/writers and the GGUF object (mlx-c io_types.h).
 * Available in every build, bare metal included: a reader can serve an image from flash. */
#ifndef MLX_IO_TYPES_H
#define MLX_IO_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mlx/c/array.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \defgroup mlx_io_types IO Types
 */
/**@{*/

/** A custom reader (a descriptor and its callbacks). */
typedef struct mlx_io_reader_ {
  void* ctx;
} mlx_io_reader;
/** A custom writer (a descriptor and its callbacks). */
typedef struct mlx_io_writer_ {
  void* ctx;
} mlx_io_writer;

/**
 * Callbacks over a user descriptor. A reader needs tell, seek and read (the data from the
 * current position to the end is read when a load is called, not later); a writer needs
 * write. is_open, good, label and free may be NULL. free(desc) is called once, when the
 * reader/writer handle is freed.
 */
typedef struct mlx_io_vtable_ {
  bool (*is_open)(void*);
  bool (*good)(void*);
  size_t (*tell)(void*);
  void (*seek)(void*, int64_t off, int whence);
  void (*read)(void*, char* data, size_t n);
  void (*read_at_offset)(void*, char* data, size_t n, size_t off);
  void (*write)(void*, const char* data, size_t n);
  const char* (*label)(void*);
  void (*free)(void*);
} mlx_io_vtable;

/** A new reader over `desc`. */
mlx_io_reader mlx_io_reader_new(void* desc, mlx_io_vtable vtable);
/** The reader's descriptor. */
int mlx_io_reader_descriptor(void** desc_, mlx_io_reader io);
/** The reader's label. */
int mlx_io_reader_tostring(mlx_string* str_, mlx_io_reader io);
/** Frees the reader (calls the vtable's free). */
int mlx_io_reader_free(mlx_io_reader io);
/** A new writer over `desc`. */
mlx_io_writer mlx_io_writer_new(void* desc, mlx_io_vtable vtable);
/** The writer's descriptor. */
int mlx_io_writer_descriptor(void** desc_, mlx_io_writer io);
/** The writer's label. */
int mlx_io_writer_tostring(mlx_string* str_, mlx_io_writer io);
/** Frees the writer (calls the vtable's free). */
int mlx_io_writer_free(mlx_io_writer io);

/** A GGUF object: named tensors plus metadata (arrays, strings or lists of strings). */
typedef struct mlx_io_gguf_ {
  void* ctx;
} mlx_io_gguf;

/** A new object with no tensors and no metadata. */
mlx_io_gguf mlx_io_gguf_new(void);
int mlx_io_gguf_free(mlx_io_gguf io);
/** The tensor names, sorted. */
int mlx_io_gguf_get_keys(mlx_vector_string* keys, mlx_io_gguf io);
int mlx_io_gguf_get_array(mlx_array* arr, mlx_io_gguf io, const char* key);
int mlx_io_gguf_get_metadata_array(
    mlx_array* arr,
    mlx_io_gguf io,
    const char* key);
int mlx_io_gguf_get_metadata_string(
    mlx_string* str,
    mlx_io_gguf io,
    const char* key);
int mlx_io_gguf_get_metadata_vector_string(
    mlx_vector_string* vstr,
    mlx_io_gguf io,
    const char* key);
int mlx_io_gguf_has_metadata_array(bool* flag, mlx_io_gguf io, const char* key);
int mlx_io_gguf_has_metadata_string(
    bool* flag,
    mlx_io_gguf io,
    const char* key);
int mlx_io_gguf_has_metadata_vector_string(
    bool* flag,
    mlx_io_gguf io,
    const char* key);
int mlx_io_gguf_set_array(mlx_io_gguf io, const char* key, const mlx_array arr);
int mlx_io_gguf_set_metadata_array(
    mlx_io_gguf io,
    const char* key,
    const mlx_array marr);
int mlx_io_gguf_set_metadata_string(
    mlx_io_gguf io,
    const char* key,
    const char* mstr);
int mlx_io_gguf_set_metadata_vector_string(
    mlx_io_gguf io,
    const char* key,
    const mlx_vector_string mvstr);

/**@}*/

#ifdef __cplusplus
}
#endif

#endif
