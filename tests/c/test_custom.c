/* Custom transforms (transforms.h: mlx_custom_function, mlx_custom_vjp, mlx_checkpoint): the
 * C rules are used by their own transform only, the others fall back to transforming the
 * function; checkpoint gives the plain gradients and runs the function again backward.
 * Expected values are hand-computed. */
#include <math.h>
#include <stdlib.h>

#include "transforms_support.h"

/* res = [in[0] * c] */
static int scaled(mlx_vector_array* res, const mlx_vector_array in, float c) {
  mlx_array x = mlx_array_new(), k = mlx_array_new_float(c);
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_multiply(&x, x, k, S) || mlx_vector_array_set_value(res, x);
  mlx_array_free(x);
  mlx_array_free(k);
  return rc;
}

/* f(x) = x² */
static int square(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_multiply(&x, x, x, S) || mlx_vector_array_set_value(res, x);
  mlx_array_free(x);
  return rc;
}

/* vjp rule: 42 · cotangent (ignores the true derivative on purpose). */
static int vjp_42(mlx_vector_array* res, const mlx_vector_array primals, const mlx_vector_array cots,
                  const mlx_vector_array outs) {
  (void)primals;
  (void)outs;
  return scaled(res, cots, 42.0f);
}

static int g_jvp_argnums_ok = 0;
/* jvp rule: 7 · tangent; records whether it got argnums {0}. */
static int jvp_7(mlx_vector_array* res, const mlx_vector_array primals, const mlx_vector_array tans,
                 const int* argnums, size_t n) {
  (void)primals;
  g_jvp_argnums_ok = (n == 1 && argnums[0] == 0 && mlx_vector_array_size(tans) == 1);
  return scaled(res, tans, 7.0f);
}

/* vmap rule: 3 · ones of the batched input, mapped on axis 0. */
static int vmap_3(mlx_vector_array* res, mlx_vector_int* axes_out, const mlx_vector_array in, const int* axes,
                  size_t n) {
  if (n != 1 || axes[0] != 0) return 1;
  mlx_array x = mlx_array_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_ones_like(&x, x, S);
  mlx_vector_array xs = mlx_vector_array_new_value(x);
  rc = rc || scaled(res, xs, 3.0f) || mlx_vector_int_set_value(axes_out, 0);
  mlx_vector_array_free(xs);
  mlx_array_free(x);
  return rc;
}

static int failing_vjp(mlx_vector_array* res, const mlx_vector_array p, const mlx_vector_array c,
                       const mlx_vector_array o) {
  (void)res, (void)p, (void)c, (void)o;
  return 1;
}

static void test_custom_function(void) {
  mlx_closure f = mlx_closure_new_func(square);
  mlx_closure_custom vjp = mlx_closure_custom_new_func(vjp_42);
  mlx_closure_custom_jvp jvp = mlx_closure_custom_jvp_new_func(jvp_7);
  mlx_closure_custom_vmap vmap = mlx_closure_custom_vmap_new_func(vmap_3);
  mlx_closure_custom_jvp no_jvp = mlx_closure_custom_jvp_new();
  mlx_closure_custom_vmap no_vmap = mlx_closure_custom_vmap_new();
  mlx_closure only_vjp = mlx_closure_new(), all = mlx_closure_new();
  CHECK_OK(mlx_custom_function(&only_vjp, f, vjp, no_jvp, no_vmap));
  CHECK_OK(mlx_custom_function(&all, f, vjp, jvp, vmap));

  mlx_array x = vec3(1.0f, 2.0f, 3.0f), t = vec3(1.0f, 2.0f, 3.0f);
  mlx_vector_array xs = mlx_vector_array_new_value(x), ts = mlx_vector_array_new_value(t);
  mlx_vector_array r0 = mlx_vector_array_new(), r1 = mlx_vector_array_new();

  /* vjp: the rule's 42·c; the forward value is still x². */
  CHECK_OK(mlx_vjp(&r0, &r1, only_vjp, xs, ts));
  CHECK_NEAR(elem(r0, 0, 2), 9.0f);
  CHECK_NEAR(elem(r1, 0, 0), 42.0f);
  CHECK_NEAR(elem(r1, 0, 2), 126.0f);
  /* jvp without a jvp rule: the derivative of x², 2x·t. */
  CHECK_OK(mlx_jvp(&r0, &r1, only_vjp, xs, ts));
  CHECK_NEAR(elem(r1, 0, 1), 8.0f);
  CHECK_NEAR(elem(r1, 0, 2), 18.0f);
  /* With a jvp rule: 7·t, and the rule saw argnums {0}. */
  CHECK_OK(mlx_jvp(&r0, &r1, all, xs, ts));
  CHECK_NEAR(elem(r1, 0, 1), 14.0f);
  CHECK(g_jvp_argnums_ok);
  /* vmap: without a rule x², with the rule 3. */
  CHECK_OK(mlx_arm_vmap(&r0, only_vjp, xs, NULL, 0, NULL, 0));
  CHECK_NEAR(elem(r0, 0, 2), 9.0f);
  CHECK_OK(mlx_arm_vmap(&r0, all, xs, NULL, 0, NULL, 0));
  CHECK_NEAR(elem(r0, 0, 2), 3.0f);

  /* A failing rule fails the transform; an empty vjp handle is refused by mlx_custom_vjp. */
  mlx_closure_custom bad = mlx_closure_custom_new_func(failing_vjp);
  mlx_closure failing = mlx_closure_new();
  CHECK_OK(mlx_custom_vjp(&failing, f, bad));
  CHECK_FAILS(mlx_vjp(&r0, &r1, failing, xs, ts), "non-zero");
  mlx_closure_custom empty = mlx_closure_custom_new();
  CHECK_FAILS(mlx_custom_vjp(&failing, f, empty), "mlx_closure_custom");
  CHECK_FAILS(mlx_custom_function(NULL, f, vjp, jvp, vmap), "NULL");

  mlx_closure_free(failing);
  mlx_closure_custom_free(bad);
  mlx_vector_array_free(r0);
  mlx_vector_array_free(r1);
  mlx_vector_array_free(xs);
  mlx_vector_array_free(ts);
  mlx_array_free(x);
  mlx_array_free(t);
  mlx_closure_free(only_vjp);
  mlx_closure_free(all);
  mlx_closure_custom_jvp_free(no_jvp);
  mlx_closure_custom_vmap_free(no_vmap);
  mlx_closure_custom_free(vjp);
  mlx_closure_custom_jvp_free(jvp);
  mlx_closure_custom_vmap_free(vmap);
  mlx_closure_free(f);
}

/* h(x) = sum(x · sin(x)), counting its calls in the payload. */
static int x_sin_x_counted(mlx_vector_array* res, const mlx_vector_array in, void* payload) {
  (*(int*)payload)++;
  mlx_array x = mlx_array_new(), s = mlx_array_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_sin(&s, x, S) || mlx_multiply(&s, s, x, S) ||
           mlx_sum(&s, s, false, S) || mlx_vector_array_set_value(res, s);
  mlx_array_free(x);
  mlx_array_free(s);
  return rc;
}

static int g_dtor_runs = 0;
static void count_dtor(void* p) {
  (void)p;
  g_dtor_runs++;
}

static void test_checkpoint(void) {
  static int calls = 0;
  mlx_closure h = mlx_closure_new_func_payload(x_sin_x_counted, &calls, count_dtor);
  mlx_closure ck = mlx_closure_new();
  CHECK_OK(mlx_checkpoint(&ck, h));
  mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
  int arg0 = 0;
  CHECK_OK(mlx_value_and_grad(&vg, ck, &arg0, 1));
  mlx_array x = vec3(0.5f, -1.0f, 2.0f);
  mlx_vector_array xs = mlx_vector_array_new_value(x), v = mlx_vector_array_new(), g = mlx_vector_array_new();
  calls = 0;
  CHECK_OK(mlx_closure_value_and_grad_apply(&v, &g, vg, xs));
  /* d/dx x·sin(x) = sin(x) + x·cos(x) */
  const float xv[3] = {0.5f, -1.0f, 2.0f};
  for (int i = 0; i < 3; i++) CHECK_NEAR(elem(g, 0, i), sinf(xv[i]) + xv[i] * cosf(xv[i]));
  CHECK_NEAR(elem(v, 0, 0), 0.5f * sinf(0.5f) + sinf(-1.0f) * -1.0f + 2.0f * sinf(2.0f));
  CHECK(calls == 2); /* forward, then again in the backward pass */
  mlx_vector_array_free(v);
  mlx_vector_array_free(g);
  mlx_vector_array_free(xs);
  mlx_array_free(x);
  mlx_closure_value_and_grad_free(vg);
  mlx_closure_free(ck);
  CHECK(g_dtor_runs == 0); /* h is still held here */
  mlx_closure_free(h);
  CHECK(g_dtor_runs == 1);
}

int main(void) {
  install_test_handler();
  S = mlx_default_cpu_stream_new();
  test_custom_function();
  test_checkpoint();
  mlx_stream_free(S);
  return finish("test_custom");
}
