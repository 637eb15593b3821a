/* graph_utils.h: the dot text of a small graph (c = a*b + a, inputs named by the caller, the
 * rest named A, B, ... in the order asked), written to a FILE* and into a string; the namer
 * keeps its names; a NULL FILE* or namer result is an error. The expected text is hand-written
 * from the graph: each op once, inputs before readers, inputs as sources, outputs as sinks. */
#include "check.h"

static const char* WANT =
    "digraph {\n"
    "{ rank=source; \"a\"; }\n"
    "{ rank=source; \"b\"; }\n"
    "{ P0 [label=\"Multiply\", shape=rectangle]; }\n"
    "\"a\" -> P0\n"
    "\"b\" -> P0\n"
    "{ \"C\"; }\n"
    "P0 -> \"C\"\n"
    "{ P1 [label=\"Add\", shape=rectangle]; }\n"
    "\"C\" -> P1\n"
    "\"a\" -> P1\n"
    "{ rank=sink; \"D\"; }\n"
    "P1 -> \"D\"\n"
    "}\n";

int main(void) {
  install_test_handler();
  mlx_stream s = mlx_default_cpu_stream_new();
  float da[2] = {1, 2}, db[2] = {3, 4};
  int shape[1] = {2};
  mlx_array a = mlx_array_new_data(da, shape, 1, MLX_FLOAT32);
  mlx_array b = mlx_array_new_data(db, shape, 1, MLX_FLOAT32);
  mlx_array m = mlx_array_new(), c = mlx_array_new();
  CHECK_OK(mlx_multiply(&m, a, b, s));
  CHECK_OK(mlx_add(&c, m, a, s));
  mlx_vector_array outs = mlx_vector_array_new_value(c);

  mlx_node_namer namer = mlx_node_namer_new();
  CHECK_OK(mlx_node_namer_set_name(namer, a, "a"));
  CHECK_OK(mlx_node_namer_set_name(namer, b, "b"));
  FILE* f = tmpfile();
  CHECK(f != NULL);
  CHECK_OK(mlx_export_to_dot(f, namer, outs));
  char buf[1024] = {0};
  rewind(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  CHECK_STR(buf, WANT);

  /* The namer keeps the names it gave; a new array gets the next one. */
  const char* name = NULL;
  CHECK_OK(mlx_node_namer_get_name(&name, namer, c));
  CHECK_STR(name, "D");
  CHECK_OK(mlx_node_namer_get_name(&name, namer, m));
  CHECK_STR(name, "C");
  mlx_array e = mlx_array_new_float(1.0f);
  CHECK_OK(mlx_node_namer_get_name(&name, namer, e));
  CHECK_STR(name, "E");
  mlx_array_free(e);

  /* The same text as a string, with a fresh namer named the same way. */
  mlx_node_namer n2 = mlx_node_namer_new();
  CHECK_OK(mlx_node_namer_set_name(n2, a, "a"));
  CHECK_OK(mlx_node_namer_set_name(n2, b, "b"));
  mlx_string str = mlx_string_new();
  CHECK_OK(mlx_arm_export_to_dot_string(&str, n2, outs));
  CHECK_STR(mlx_string_data(str), WANT);
  mlx_string_free(str);
  mlx_node_namer_free(n2);

  CHECK_FAILS(mlx_export_to_dot(NULL, namer, outs), "FILE");
  CHECK_FAILS(mlx_node_namer_get_name(NULL, namer, c), "NULL");

  /* Evaluated, the output has no graph left: it is a lone source. */
  CHECK_OK(mlx_array_eval(c));
  mlx_string s2 = mlx_string_new();
  CHECK_OK(mlx_arm_export_to_dot_string(&s2, namer, outs));
  CHECK_STR(mlx_string_data(s2), "digraph {\n{ rank=source; \"D\"; }\n}\n");
  mlx_string_free(s2);

  mlx_node_namer_free(namer);
  mlx_vector_array_free(outs);
  mlx_array_free(a);
  mlx_array_free(b);
  mlx_array_free(m);
  mlx_array_free(c);
  mlx_stream_free(s);
  return finish("test_graph_utils");
}
