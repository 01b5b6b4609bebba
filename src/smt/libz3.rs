//! libz3, loaded when z3 is first asked a question rather than when the process starts.
//!
//! The `z3` crate calls libz3 through z3-sys's `extern "C"` declarations. This module defines
//! each function the binary calls, under libz3's own name: the linker resolves z3-sys's
//! references to these definitions, so the executable does not need libz3 (rustc links with
//! `--as-needed`) and a process that never reaches z3 never maps it. Loading libz3 is a large
//! part of a short process's cost (20,000 relocations, 750 static constructors, libstdc++;
//! docs/performance.md, the `--version` row), and a machine without libz3 can still run
//! everything but z3.
//!
//! Each definition forwards to the function of the same name in the library `dlopen`ed on the
//! first call: `$TYPEJOIN_LIBZ3` when set (a path, or a name the loader searches for), else
//! `libz3.so.4` (Debian, Ubuntu), else `libz3.so`. Callers ask [`load`] first
//! ([`super::z3_available`]), so a missing library is an error message, not a crash; a call
//! that skipped it and finds no library aborts with the same message.
//!
//! A function the binary starts calling that is missing here is resolved by the linker from
//! libz3 itself, which then loads at start-up again: nothing breaks, the binary is slower to
//! start, and `tests/it/cli.rs`'s `the_binary_does_not_load_libz3_at_start_up` fails with the
//! symbol to add (`nm -D --undefined-only target/release/typejoin | grep Z3_`).

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

use z3_sys::{
    Z3_ast, Z3_ast_vector, Z3_config, Z3_context, Z3_error_handler, Z3_lbool, Z3_model,
    Z3_optimize, Z3_solver, Z3_sort, Z3_sort_kind, Z3_string, Z3_symbol,
};

/// The library names tried in order when `TYPEJOIN_LIBZ3` is not set.
const NAMES: [&str; 2] = ["libz3.so.4", "libz3.so"];

macro_rules! delay_loaded {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;)*) => {
        /// libz3's entry points, resolved once.
        #[allow(non_snake_case)]
        struct Api {
            $($name: unsafe extern "C" fn($($ty),*) $(-> $ret)?,)*
        }

        impl Api {
            /// Looks up every entry point in `lib` (a `dlopen` handle, never closed).
            fn resolve(lib: *mut c_void) -> Result<Api, String> {
                Ok(Api {
                    $($name: {
                        let f = symbol(lib, concat!(stringify!($name), "\0"))?;
                        // SAFETY: `f` is libz3's function of this name, whose C signature
                        // (z3_api.h) is the one z3-sys declares and this type spells.
                        unsafe {
                            std::mem::transmute::<
                                *mut c_void,
                                unsafe extern "C" fn($($ty),*) $(-> $ret)?,
                            >(f)
                        }
                    },)*
                })
            }
        }

        $(
            /// Forwards to libz3's function of the same name, loading libz3 on the first call.
            ///
            /// # Safety
            ///
            /// libz3's contract for this function (z3_api.h).
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the caller keeps libz3's contract for this function, and the pointer
                // is libz3's own.
                unsafe { (api().$name)($($arg),*) }
            }
        )*
    };
}

// Every libz3 function the binary calls: the `z3` crate's uses, as z3-sys declares them.
delay_loaded! {
    fn Z3_ast_to_string(c: Z3_context, a: Z3_ast) -> Z3_string;
    fn Z3_ast_vector_dec_ref(c: Z3_context, v: Z3_ast_vector);
    fn Z3_ast_vector_get(c: Z3_context, v: Z3_ast_vector, i: c_uint) -> Option<Z3_ast>;
    fn Z3_ast_vector_inc_ref(c: Z3_context, v: Z3_ast_vector);
    fn Z3_ast_vector_size(c: Z3_context, v: Z3_ast_vector) -> c_uint;
    fn Z3_get_bool_value(c: Z3_context, a: Z3_ast) -> Z3_lbool;
    fn Z3_get_sort_kind(c: Z3_context, t: Z3_sort) -> Z3_sort_kind;
    fn Z3_mk_bool_sort(c: Z3_context) -> Option<Z3_sort>;
    fn Z3_mk_optimize(c: Z3_context) -> Option<Z3_optimize>;
    fn Z3_optimize_check(
        c: Z3_context,
        o: Z3_optimize,
        num_assumptions: c_uint,
        assumptions: *const Z3_ast,
    ) -> Z3_lbool;
    fn Z3_optimize_dec_ref(c: Z3_context, d: Z3_optimize);
    fn Z3_optimize_from_string(c: Z3_context, o: Z3_optimize, s: Z3_string);
    fn Z3_optimize_get_model(c: Z3_context, o: Z3_optimize) -> Option<Z3_model>;
    fn Z3_optimize_get_reason_unknown(c: Z3_context, d: Z3_optimize) -> Z3_string;
    fn Z3_optimize_inc_ref(c: Z3_context, d: Z3_optimize);
    fn Z3_solver_check_assumptions(
        c: Z3_context,
        s: Z3_solver,
        num_assumptions: c_uint,
        assumptions: *const Z3_ast,
    ) -> Z3_lbool;
    fn Z3_solver_get_unsat_core(c: Z3_context, s: Z3_solver) -> Option<Z3_ast_vector>;
    fn Z3_dec_ref(c: Z3_context, a: Z3_ast);
    fn Z3_del_config(c: Z3_config);
    fn Z3_del_context(c: Z3_context);
    fn Z3_get_ast_id(c: Z3_context, t: Z3_ast) -> c_uint;
    fn Z3_get_numeral_uint64(c: Z3_context, v: Z3_ast, u: *mut u64) -> bool;
    fn Z3_get_sort(c: Z3_context, a: Z3_ast) -> Option<Z3_sort>;
    fn Z3_global_param_set(param_id: Z3_string, param_value: Z3_string);
    fn Z3_inc_ref(c: Z3_context, a: Z3_ast);
    fn Z3_interrupt(c: Z3_context);
    fn Z3_is_eq_sort(c: Z3_context, s1: Z3_sort, s2: Z3_sort) -> bool;
    fn Z3_mk_and(c: Z3_context, num_args: c_uint, args: *const Z3_ast) -> Option<Z3_ast>;
    fn Z3_mk_bv_sort(c: Z3_context, sz: c_uint) -> Option<Z3_sort>;
    fn Z3_mk_config() -> Option<Z3_config>;
    fn Z3_mk_const(c: Z3_context, s: Z3_symbol, ty: Z3_sort) -> Option<Z3_ast>;
    fn Z3_mk_context_rc(c: Z3_config) -> Option<Z3_context>;
    fn Z3_mk_eq(c: Z3_context, l: Z3_ast, r: Z3_ast) -> Option<Z3_ast>;
    fn Z3_mk_int_symbol(c: Z3_context, i: c_int) -> Option<Z3_symbol>;
    fn Z3_mk_not(c: Z3_context, a: Z3_ast) -> Option<Z3_ast>;
    fn Z3_mk_solver(c: Z3_context) -> Option<Z3_solver>;
    fn Z3_mk_solver_for_logic(c: Z3_context, logic: Z3_symbol) -> Option<Z3_solver>;
    fn Z3_mk_string_symbol(c: Z3_context, s: Z3_string) -> Option<Z3_symbol>;
    fn Z3_mk_unsigned_int64(c: Z3_context, v: u64, ty: Z3_sort) -> Option<Z3_ast>;
    fn Z3_model_dec_ref(c: Z3_context, m: Z3_model);
    fn Z3_model_eval(c: Z3_context, m: Z3_model, t: Z3_ast, completion: bool, v: *mut Z3_ast)
        -> bool;
    fn Z3_model_inc_ref(c: Z3_context, m: Z3_model);
    fn Z3_set_error_handler(c: Z3_context, h: Z3_error_handler);
    fn Z3_solver_assert(c: Z3_context, s: Z3_solver, a: Z3_ast);
    fn Z3_solver_check(c: Z3_context, s: Z3_solver) -> Z3_lbool;
    fn Z3_solver_dec_ref(c: Z3_context, s: Z3_solver);
    fn Z3_solver_from_string(c: Z3_context, s: Z3_solver, str_: Z3_string);
    fn Z3_solver_get_model(c: Z3_context, s: Z3_solver) -> Option<Z3_model>;
    fn Z3_solver_get_reason_unknown(c: Z3_context, s: Z3_solver) -> Z3_string;
    fn Z3_solver_inc_ref(c: Z3_context, s: Z3_solver);
    fn Z3_sort_to_ast(c: Z3_context, s: Z3_sort) -> Option<Z3_ast>;
    fn Z3_sort_to_string(c: Z3_context, s: Z3_sort) -> Z3_string;
}

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// Loads libz3 (once per process): `Err` says which libraries were tried and why each failed.
pub fn load() -> Result<(), String> {
    match API.get_or_init(open) {
        Ok(_) => Ok(()),
        Err(e) => Err(e.clone()),
    }
}

fn api() -> &'static Api {
    match API.get_or_init(open) {
        Ok(api) => api,
        Err(e) => {
            // Only a caller that skipped `load` gets here, inside a C-ABI function that cannot
            // return an error.
            eprintln!("typejoin: {e}");
            std::process::abort()
        }
    }
}

fn open() -> Result<Api, String> {
    let names: Vec<String> = match std::env::var_os("TYPEJOIN_LIBZ3") {
        Some(path) => vec![path.to_string_lossy().into_owned()],
        None => NAMES.iter().map(|n| n.to_string()).collect(),
    };
    let mut failures = Vec::new();
    for name in &names {
        match dlopen(name) {
            Ok(lib) => return Api::resolve(lib).map_err(|e| format!("{name}: {e}")),
            Err(e) => failures.push(e),
        }
    }
    Err(format!(
        "z3 is not available ({}): install z3's library (Debian and Ubuntu: `apt-get install \
         libz3-4`) or set TYPEJOIN_LIBZ3 to the path of a libz3.so",
        failures.join("; ")
    ))
}

/// `dlopen(name)`, the handle kept for the life of the process.
fn dlopen(name: &str) -> Result<*mut c_void, String> {
    let c_name = CString::new(name).map_err(|_| format!("{name:?}: a NUL in the name"))?;
    // SAFETY: `c_name` is a NUL-terminated string; loading libz3 runs its static
    // constructors, which only initialise its own globals. Called once, under `API`'s lock.
    let lib = unsafe { libc::dlopen(c_name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        Err(last_error().unwrap_or_else(|| format!("{name}: cannot be loaded")))
    } else {
        Ok(lib)
    }
}

fn symbol(lib: *mut c_void, name: &'static str) -> Result<*mut c_void, String> {
    // SAFETY: `lib` is a live handle from `dlopen`; `name` ends in NUL (the macro appends it).
    let f = unsafe { libc::dlsym(lib, name.as_ptr() as *const c_char) };
    if f.is_null() {
        let shown = name.trim_end_matches('\0');
        Err(last_error().unwrap_or_else(|| format!("no symbol {shown}")))
    } else {
        Ok(f)
    }
}

/// The loader's message for the last failed call, if it left one.
fn last_error() -> Option<String> {
    // SAFETY: `dlerror` returns NULL or a NUL-terminated string valid until the next dl* call
    // on this thread; it is copied before any.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        None
    } else {
        // SAFETY: non-null, NUL-terminated (above).
        Some(unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned())
    }
}
