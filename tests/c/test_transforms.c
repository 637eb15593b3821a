/* Closures and autodiff transforms (closure.h, transforms.h): gradients checked against
 * hand-computed derivatives, payload lifetimes, nesting (grad of grad) and errors inside
 * user closures becoming error statuses. */
#include <math.h>
#include <stdlib.h>

#include "transforms_support.h"


/* f(x, y) = [sum(x * y)] */
static int sum_xy(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new(), p = mlx_array_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_vector_array_get(&y, in, 1) ||
           mlx_multiply(&p, x, y, S) || mlx_sum(&p, p, false, S) ||
           mlx_vector_array_set_value(res, p);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(p);
  return rc;
}

/* f(x) = x * sin(x) */
static int x_sin_x(mlx_array* res, const mlx_array x) {
  mlx_array s = mlx_array_new();
  int rc = mlx_sin(&s, x, S) || mlx_multiply(res, x, s, S);
  mlx_array_free(s);
  return rc;
}

/* f(x, y) = (sum(exp(x) * y^2), aux = x + 1) */
static int loss_with_aux(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new(), e = mlx_array_new(), one = mlx_array_new_float(1.0f);
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_vector_array_get(&y, in, 1) ||
           mlx_exp(&e, x, S) || mlx_multiply(&e, e, y, S) || mlx_multiply(&e, e, y, S) ||
           mlx_sum(&e, e, false, S) || mlx_vector_array_set_value(res, e) ||
           mlx_add(&x, x, one, S) || mlx_vector_array_append_value(*res, x);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(e);
  mlx_array_free(one);
  return rc;
}

static void test_closure_apply_and_set(void) {
  mlx_closure c = mlx_closure_new_unary(x_sin_x);
  mlx_closure c2 = mlx_closure_new();
  CHECK_OK(mlx_closure_set(&c2, c));
  mlx_closure_free(c);  /* c2 keeps the function */
  mlx_array x = mlx_array_new_float(2.0f);
  mlx_vector_array in = mlx_vector_array_new_value(x);
  mlx_vector_array out = mlx_vector_array_new();
  CHECK_OK(mlx_closure_apply(&out, c2, in));
  CHECK(mlx_vector_array_size(out) == 1);
  CHECK_NEAR(elem(out, 0, 0), 2.0f * sinf(2.0f));
  /* The unary closure refuses two inputs. */
  mlx_vector_array_append_value(in, x);
  CHECK_FAILS(mlx_closure_apply(&out, c2, in), "expected unary input");
  /* The empty handle is an error, not a crash. */
  mlx_closure empty = mlx_closure_new();
  CHECK_FAILS(mlx_closure_apply(&out, empty, in), "expected a non-empty mlx_closure");
  /* A NULL function pointer gives the empty handle and one message. */
  int before = g_errors;
  mlx_closure bad = mlx_closure_new_func(NULL);
  CHECK(bad.ctx == NULL && g_errors == before + 1);
  mlx_closure_free(c2);
  mlx_array_free(x);
  mlx_vector_array_free(in);
  mlx_vector_array_free(out);
}

static void test_vjp(void) {
  mlx_closure f = mlx_closure_new_func(sum_xy);
  mlx_array x = vec3(1, 2, 3), y = vec3(4, 5, 6), ct = mlx_array_new_float(2.0f);
  mlx_vector_array primals = mlx_vector_array_new_data((mlx_array[]){x, y}, 2);
  mlx_vector_array cots = mlx_vector_array_new_value(ct);
  mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
  CHECK_OK(mlx_vjp(&outs, &grads, f, primals, cots));
  CHECK_NEAR(elem(outs, 0, 0), 32.0f);
  /* d/dx = ct * y, d/dy = ct * x */
  for (int i = 0; i < 3; i++) {
    CHECK_NEAR(elem(grads, 0, i), 2.0f * (4 + i));
    CHECK_NEAR(elem(grads, 1, i), 2.0f * (1 + i));
  }
  /* As MLX: an extra cotangent is ignored, a missing one is an error. */
  mlx_vector_array_append_value(cots, ct);
  CHECK_OK(mlx_vjp(&outs, &grads, f, primals, cots));
  CHECK_NEAR(elem(grads, 1, 2), 6.0f);
  mlx_vector_array none = mlx_vector_array_new();
  CHECK_FAILS(mlx_vjp(&outs, &grads, f, primals, none), "does not match number of cotangents");
  CHECK_FAILS(mlx_vjp(NULL, &grads, f, primals, cots), "NULL");
  mlx_vector_array_free(none);
  mlx_closure_free(f);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(ct);
  mlx_vector_array_free(primals);
  mlx_vector_array_free(cots);
  mlx_vector_array_free(outs);
  mlx_vector_array_free(grads);
}

static void test_jvp(void) {
  mlx_closure f = mlx_closure_new_unary(x_sin_x);
  mlx_array x = vec3(0.5f, 1.0f, -2.0f), t = vec3(1.0f, 2.0f, 3.0f);
  mlx_vector_array primals = mlx_vector_array_new_value(x), tans = mlx_vector_array_new_value(t);
  mlx_vector_array outs = mlx_vector_array_new(), douts = mlx_vector_array_new();
  CHECK_OK(mlx_jvp(&outs, &douts, f, primals, tans));
  const float xs[3] = {0.5f, 1.0f, -2.0f}, ts[3] = {1, 2, 3};
  for (int i = 0; i < 3; i++) {
    CHECK_NEAR(elem(outs, 0, i), xs[i] * sinf(xs[i]));
    CHECK_NEAR(elem(douts, 0, i), (sinf(xs[i]) + xs[i] * cosf(xs[i])) * ts[i]);
  }
  /* A tangent of the wrong shape. */
  mlx_array bad = mlx_array_new_float(1.0f);
  mlx_vector_array_set_value(&tans, bad);
  CHECK_FAILS(mlx_jvp(&outs, &douts, f, primals, tans), "Input shape does not match shape of tangent");
  mlx_array_free(bad);
  mlx_closure_free(f);
  mlx_array_free(x);
  mlx_array_free(t);
  mlx_vector_array_free(primals);
  mlx_vector_array_free(tans);
  mlx_vector_array_free(outs);
  mlx_vector_array_free(douts);
}

static void test_value_and_grad(void) {
  mlx_closure f = mlx_closure_new_func(loss_with_aux);
  mlx_array x = vec3(0.0f, 1.0f, -1.0f), y = vec3(1.0f, 2.0f, 3.0f);
  mlx_vector_array in = mlx_vector_array_new_data((mlx_array[]){x, y}, 2);
  const float xs[3] = {0, 1, -1}, ys[3] = {1, 2, 3};
  /* argnums {1, 0} and {-1, 0}: gradients come back in sorted order (x then y). */
  int nums[2][2] = {{1, 0}, {-1, 0}};
  for (int k = 0; k < 2; k++) {
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    CHECK_OK(mlx_value_and_grad(&vg, f, nums[k], 2));
    mlx_vector_array vals = mlx_vector_array_new(), grads = mlx_vector_array_new();
    CHECK_OK(mlx_closure_value_and_grad_apply(&vals, &grads, vg, in));
    CHECK(mlx_vector_array_size(vals) == 2 && mlx_vector_array_size(grads) == 2);
    float loss = 0;
    for (int i = 0; i < 3; i++) loss += expf(xs[i]) * ys[i] * ys[i];
    CHECK_NEAR(elem(vals, 0, 0), loss);
    for (int i = 0; i < 3; i++) {
      CHECK_NEAR(elem(vals, 1, i), xs[i] + 1);                     /* aux, not differentiated */
      CHECK_NEAR(elem(grads, 0, i), expf(xs[i]) * ys[i] * ys[i]);  /* d/dx */
      CHECK_NEAR(elem(grads, 1, i), 2 * expf(xs[i]) * ys[i]);      /* d/dy */
    }
    mlx_vector_array_free(vals);
    mlx_vector_array_free(grads);
    mlx_closure_value_and_grad_free(vg);
  }
  /* Argument-number errors (MLX's messages). */
  mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
  CHECK_FAILS(mlx_value_and_grad(&vg, f, NULL, 0), "Must specify at least one argument");
  int rep[2] = {1, -1}, far[1] = {2};
  mlx_vector_array a = mlx_vector_array_new(), b = mlx_vector_array_new();
  CHECK_OK(mlx_value_and_grad(&vg, f, rep, 2));
  CHECK_FAILS(mlx_closure_value_and_grad_apply(&a, &b, vg, in), "Repeat argument number");
  CHECK_OK(mlx_value_and_grad(&vg, f, far, 1));
  CHECK_FAILS(mlx_closure_value_and_grad_apply(&a, &b, vg, in), "Invalid argument number for function with 2 inputs");
  /* A function whose first output is not a scalar. */
  mlx_closure g = mlx_closure_new_unary(x_sin_x);
  int zero = 0;
  CHECK_OK(mlx_value_and_grad(&vg, g, &zero, 1));
  mlx_vector_array xin = mlx_vector_array_new_value(x);
  CHECK_FAILS(mlx_closure_value_and_grad_apply(&a, &b, vg, xin), "scalar");
  mlx_closure_free(g);
  mlx_vector_array_free(xin);
  mlx_vector_array_free(a);
  mlx_vector_array_free(b);
  mlx_closure_value_and_grad_free(vg);
  mlx_closure_free(f);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_vector_array_free(in);
}

/* --- payloads, nesting, errors inside closures ------------------------------------------ */

static int g_dtor_calls = 0;

static void count_dtor(void* p) {
  g_dtor_calls++;
  mlx_array_free(*(mlx_array*)p);
}

/* f(x) = sum(x^3 * payload) */
static int cube_times_payload(mlx_vector_array* res, const mlx_vector_array in, void* payload) {
  mlx_array x = mlx_array_new(), c = mlx_array_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_multiply(&c, x, x, S) || mlx_multiply(&c, c, x, S) ||
           mlx_multiply(&c, c, *(mlx_array*)payload, S) || mlx_sum(&c, c, false, S) ||
           mlx_vector_array_set_value(res, c);
  mlx_array_free(x);
  mlx_array_free(c);
  return rc;
}

/* g(x) = sum(grad f(x)) where the payload is f's value_and_grad closure. */
static int sum_of_grad(mlx_vector_array* res, const mlx_vector_array in, void* payload) {
  mlx_closure_value_and_grad vg = *(mlx_closure_value_and_grad*)payload;
  mlx_vector_array v = mlx_vector_array_new(), g = mlx_vector_array_new();
  mlx_array d = mlx_array_new();
  int rc = mlx_closure_value_and_grad_apply(&v, &g, vg, in) || mlx_vector_array_get(&d, g, 0) ||
           mlx_sum(&d, d, false, S) || mlx_vector_array_set_value(res, d);
  mlx_vector_array_free(v);
  mlx_vector_array_free(g);
  mlx_array_free(d);
  return rc;
}

static void test_payload_and_second_derivative(void) {
  mlx_array* k = malloc(sizeof(mlx_array));
  *k = mlx_array_new_float(2.0f);
  mlx_closure f = mlx_closure_new_func_payload(cube_times_payload, k, count_dtor);
  int zero = 0;
  mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
  CHECK_OK(mlx_value_and_grad(&vg, f, &zero, 1));
  /* grad of (sum of grad): d/dx sum(6 x^2) = 12 x */
  mlx_closure g = mlx_closure_new_func_payload(sum_of_grad, &vg, NULL);
  mlx_closure_value_and_grad vgg = mlx_closure_value_and_grad_new();
  CHECK_OK(mlx_value_and_grad(&vgg, g, &zero, 1));
  mlx_array x = vec3(1.0f, -2.0f, 0.5f);
  mlx_vector_array in = mlx_vector_array_new_value(x);
  mlx_vector_array vals = mlx_vector_array_new(), grads = mlx_vector_array_new();
  CHECK_OK(mlx_closure_value_and_grad_apply(&vals, &grads, vgg, in));
  const float xs[3] = {1.0f, -2.0f, 0.5f};
  float s = 0;
  for (int i = 0; i < 3; i++) s += 6 * xs[i] * xs[i];
  CHECK_NEAR(elem(vals, 0, 0), s);
  for (int i = 0; i < 3; i++) CHECK_NEAR(elem(grads, 0, i), 12 * xs[i]);
  /* The payload lives while any holder lives, and its destructor runs once. */
  mlx_closure_free(f);
  CHECK(g_dtor_calls == 0);
  mlx_closure_free(g);
  mlx_closure_value_and_grad_free(vgg);
  CHECK(g_dtor_calls == 0);
  mlx_closure_value_and_grad_free(vg);
  CHECK(g_dtor_calls == 1);
  free(k);
  mlx_array_free(x);
  mlx_vector_array_free(in);
  mlx_vector_array_free(vals);
  mlx_vector_array_free(grads);
}

static int refuses(mlx_vector_array* res, const mlx_vector_array in) {
  (void)res;
  (void)in;
  return 1;
}

/* Reshapes its input to an impossible shape: the op's error, then a non-zero return. */
static int bad_reshape(mlx_vector_array* res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new();
  int shape[1] = {7};
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_reshape(&x, x, shape, 1, S) || mlx_vector_array_set_value(res, x);
  mlx_array_free(x);
  return rc;
}

static void test_errors_inside_closures(void) {
  mlx_array x = vec3(1, 2, 3);
  mlx_vector_array in = mlx_vector_array_new_value(x);
  mlx_vector_array a = mlx_vector_array_new(), b = mlx_vector_array_new();
  mlx_closure f = mlx_closure_new_func(refuses);
  CHECK_FAILS(mlx_closure_apply(&a, f, in), "mlx_closure returned a non-zero value");
  CHECK_FAILS(mlx_vjp(&a, &b, f, in, in), "mlx_closure returned a non-zero value");
  CHECK_FAILS(mlx_jvp(&a, &b, f, in, in), "mlx_closure returned a non-zero value");
  int zero = 0;
  mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
  CHECK_OK(mlx_value_and_grad(&vg, f, &zero, 1));
  CHECK_FAILS(mlx_closure_value_and_grad_apply(&a, &b, vg, in), "mlx_closure returned a non-zero value");
  /* An op failing inside: its own message, then the transform's. */
  mlx_closure g = mlx_closure_new_func(bad_reshape);
  int before = g_errors;
  CHECK(mlx_vjp(&a, &b, g, in, in) != 0);
  CHECK(g_errors == before + 2 && strstr(g_last_msg, "non-zero value"));
  /* The results are untouched by the failures. */
  CHECK(mlx_vector_array_size(a) == 0 && mlx_vector_array_size(b) == 0);
  mlx_closure_free(g);
  mlx_closure_free(f);
  mlx_closure_value_and_grad_free(vg);
  mlx_array_free(x);
  mlx_vector_array_free(in);
  mlx_vector_array_free(a);
  mlx_vector_array_free(b);
}

/* f(x) = x * stop_gradient(x): the gradient is x, not 2x. */
static int x_times_stopped(mlx_array* res, const mlx_array x) {
  mlx_array s = mlx_array_new();
  int rc = mlx_stop_gradient(&s, x, S) || mlx_multiply(res, x, s, S) || mlx_sum(res, *res, false, S);
  mlx_array_free(s);
  return rc;
}

static void test_stop_gradient(void) {
  mlx_closure f = mlx_closure_new_unary(x_times_stopped);
  int zero = 0;
  mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
  CHECK_OK(mlx_value_and_grad(&vg, f, &zero, 1));
  mlx_array x = vec3(1, -2, 3);
  mlx_vector_array in = mlx_vector_array_new_value(x);
  mlx_vector_array a = mlx_vector_array_new(), b = mlx_vector_array_new();
  CHECK_OK(mlx_closure_value_and_grad_apply(&a, &b, vg, in));
  CHECK_NEAR(elem(a, 0, 0), 14.0f);
  CHECK_NEAR(elem(b, 0, 0), 1.0f);
  CHECK_NEAR(elem(b, 0, 1), -2.0f);
  CHECK_NEAR(elem(b, 0, 2), 3.0f);
  mlx_closure_free(f);
  mlx_closure_value_and_grad_free(vg);
  mlx_array_free(x);
  mlx_vector_array_free(in);
  mlx_vector_array_free(a);
  mlx_vector_array_free(b);
}

/* --- the other closure kinds: apply passes every argument through ----------------------- */

static int custom_sum3(mlx_vector_array* res, const mlx_vector_array a, const mlx_vector_array b,
                       const mlx_vector_array c) {
  mlx_array x = mlx_array_new(), y = mlx_array_new(), z = mlx_array_new();
  int rc = mlx_vector_array_get(&x, a, 0) || mlx_vector_array_get(&y, b, 0) || mlx_vector_array_get(&z, c, 0) ||
           mlx_add(&x, x, y, S) || mlx_add(&x, x, z, S) || mlx_vector_array_set_value(res, x);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(z);
  return rc;
}

static int custom_jvp_scale(mlx_vector_array* res, const mlx_vector_array a, const mlx_vector_array b,
                            const int* nums, size_t n, void* payload) {
  (void)b;
  mlx_array x = mlx_array_new(), k = mlx_array_new_float((float)(n * 10 + nums[0]) * *(float*)payload);
  int rc = mlx_vector_array_get(&x, a, 0) || mlx_multiply(&x, x, k, S) || mlx_vector_array_set_value(res, x);
  mlx_array_free(x);
  mlx_array_free(k);
  return rc;
}

static int custom_vmap_axes(mlx_vector_array* res, mlx_vector_int* axes, const mlx_vector_array in,
                            const int* nums, size_t n) {
  int rc = mlx_vector_array_set(res, in);
  for (size_t i = 0; i < n && !rc; i++) rc = mlx_vector_int_append_value(*axes, nums[i] + 1);
  return rc;
}

static int kwargs_fn(mlx_vector_array* res, const mlx_vector_array in, const mlx_map_string_to_array kw) {
  mlx_array x = mlx_array_new(), w = mlx_array_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_map_string_to_array_get(&w, kw, "w") ||
           mlx_multiply(&x, x, w, S) || mlx_vector_array_set_value(res, x);
  mlx_array_free(x);
  mlx_array_free(w);
  return rc;
}

static void test_other_closure_kinds(void) {
  mlx_array one = mlx_array_new_float(1.0f), two = mlx_array_new_float(2.0f), four = mlx_array_new_float(4.0f);
  mlx_vector_array v1 = mlx_vector_array_new_value(one), v2 = mlx_vector_array_new_value(two),
                   v4 = mlx_vector_array_new_value(four), out = mlx_vector_array_new();
  mlx_closure_custom c = mlx_closure_custom_new_func(custom_sum3);
  CHECK_OK(mlx_closure_custom_apply(&out, c, v1, v2, v4));
  CHECK_NEAR(elem(out, 0, 0), 7.0f);

  static float scale = 0.5f;
  mlx_closure_custom_jvp j = mlx_closure_custom_jvp_new_func_payload(custom_jvp_scale, &scale, NULL);
  int nums[2] = {3, 9};
  CHECK_OK(mlx_closure_custom_jvp_apply(&out, j, v2, v1, nums, 2));
  CHECK_NEAR(elem(out, 0, 0), 2.0f * 23.0f * 0.5f);

  mlx_closure_custom_vmap m = mlx_closure_custom_vmap_new_func(custom_vmap_axes);
  mlx_vector_int axes = mlx_vector_int_new();
  CHECK_OK(mlx_closure_custom_vmap_apply(&out, &axes, m, v4, nums, 2));
  int a0 = -1, a1 = -1;
  mlx_vector_int_get(&a0, axes, 0);
  mlx_vector_int_get(&a1, axes, 1);
  CHECK(mlx_vector_int_size(axes) == 2 && a0 == 4 && a1 == 10);
  CHECK_NEAR(elem(out, 0, 0), 4.0f);

  mlx_closure_kwargs k = mlx_closure_kwargs_new_func(kwargs_fn);
  mlx_map_string_to_array kw = mlx_map_string_to_array_new();
  mlx_map_string_to_array_insert(kw, "w", four);
  CHECK_OK(mlx_closure_kwargs_apply(&out, k, v2, kw));
  CHECK_NEAR(elem(out, 0, 0), 8.0f);
  mlx_map_string_to_array empty_kw = mlx_map_string_to_array_new();
  CHECK(mlx_closure_kwargs_apply(&out, k, v2, empty_kw) != 0);  /* the lookup fails inside */

  mlx_closure_custom_free(c);
  mlx_closure_custom_jvp_free(j);
  mlx_closure_custom_vmap_free(m);
  mlx_closure_kwargs_free(k);
  mlx_map_string_to_array_free(kw);
  mlx_map_string_to_array_free(empty_kw);
  mlx_vector_int_free(axes);
  mlx_vector_array_free(v1);
  mlx_vector_array_free(v2);
  mlx_vector_array_free(v4);
  mlx_vector_array_free(out);
  mlx_array_free(one);
  mlx_array_free(two);
  mlx_array_free(four);
}

/* --- mlx_arm_vmap ------------------------------------------------------------------------ */

static void test_vmap(void) {
  /* f(x, y) = [sum(x * y)] over the rows of x (in_axes 0) with y shared (-1); then over the
   * columns of x (in_axes 1). */
  mlx_closure f = mlx_closure_new_func(sum_xy);
  float xd[6] = {1, 2, 3, 4, 5, 6};
  int shape[2] = {2, 3};
  mlx_array x = mlx_array_new_data(xd, shape, 2, MLX_FLOAT32), y = vec3(1, 10, 100);
  mlx_vector_array in = mlx_vector_array_new_data((mlx_array[]){x, y}, 2);
  mlx_vector_array out = mlx_vector_array_new();
  int rows[2] = {0, -1};
  CHECK_OK(mlx_arm_vmap(&out, f, in, rows, 2, NULL, 0));
  CHECK_NEAR(elem(out, 0, 0), 321.0f);
  CHECK_NEAR(elem(out, 0, 1), 654.0f);
  /* Columns of x against the elements of a 3-vector: sum over the 2 rows of x[:, j] * z[j]. */
  mlx_array z = vec3(1, 2, 3);
  mlx_vector_array in2 = mlx_vector_array_new_data((mlx_array[]){x, z}, 2);
  int cols[2] = {1, 0};
  CHECK_OK(mlx_arm_vmap(&out, f, in2, cols, 2, NULL, 0));
  CHECK_NEAR(elem(out, 0, 0), 5.0f);
  CHECK_NEAR(elem(out, 0, 1), 14.0f);
  CHECK_NEAR(elem(out, 0, 2), 27.0f);
  /* Mapped axes of different sizes; an axis out of range; nothing mapped. */
  int both[2] = {0, 0}; /* MLX reports the first input differing from the last one's size */
  CHECK_FAILS(mlx_arm_vmap(&out, f, in, both, 2, NULL, 0), "Inconsistent axis sizes: 2 and 3");
  int far[2] = {2, -1};
  CHECK_FAILS(mlx_arm_vmap(&out, f, in, far, 2, NULL, 0), "Axis 2 invalid for input with 2 dimensions");
  int none[2] = {-1, -1};
  CHECK_FAILS(mlx_arm_vmap(&out, f, in, none, 2, NULL, 0), "At least one of in_axes must be non-None");
  mlx_closure g = mlx_closure_new_func(refuses);
  CHECK_FAILS(mlx_arm_vmap(&out, g, in, rows, 2, NULL, 0), "mlx_closure returned a non-zero value");
  mlx_closure_free(g);
  mlx_closure_free(f);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(z);
  mlx_vector_array_free(in);
  mlx_vector_array_free(in2);
  mlx_vector_array_free(out);
}

int main(void) {
  install_test_handler();
  S = mlx_default_cpu_stream_new();
  test_closure_apply_and_set();
  test_vjp();
  test_jvp();
  test_value_and_grad();
  test_payload_and_second_derivative();
  test_errors_inside_closures();
  test_stop_gradient();
  test_other_closure_kinds();
  test_vmap();
  mlx_stream_free(S);
  return finish("test_transforms");
}
