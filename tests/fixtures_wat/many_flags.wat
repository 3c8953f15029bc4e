;; Test fixture, written by hand so the result's size is exact: a plain component exporting
;; `many-flags(count: u32) -> list<letters>`, where `letters` is a flags type of 32 one- and
;; two-letter names, every one set. Each element is 4 bytes in the guest and 32 `String`s on the
;; host once lifted, while wasmtime charges the lift budget one or two bytes per name.
;; tests/integration/result_memory.rs assembles it with the `wat` crate.
(component
  (core module $flags
    (memory (export "memory") 1)
    ;; The (pointer, length) of the list goes at 16; the elements at 64 KiB, in memory grown for
    ;; them and filled with ones.
    (func (export "many-flags") (param $count i32) (result i32)
      (local $pages i32)
      (local.set $pages
        (i32.add (i32.shr_u (i32.mul (local.get $count) (i32.const 4)) (i32.const 16)) (i32.const 1)))
      (if (i32.lt_s (memory.grow (local.get $pages)) (i32.const 0))
        (then unreachable))
      (memory.fill (i32.const 0x10000) (i32.const 255) (i32.mul (local.get $count) (i32.const 4)))
      (i32.store (i32.const 16) (i32.const 0x10000))
      (i32.store (i32.const 20) (local.get $count))
      (i32.const 16))
    (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
      unreachable))
  (core instance $instance (instantiate $flags))
  (type $letters' (flags "a" "b" "c" "d" "e" "f" "g" "h" "i" "j" "k" "l" "m" "n" "o" "p" "q" "r"
    "s" "t" "u" "v" "w" "x" "y" "z" "aa" "bb" "cc" "dd" "ee" "ff"))
  (export $letters "letters" (type $letters'))
  (func $many_flags (param "count" u32) (result (list $letters))
    (canon lift (core func $instance "many-flags") (memory (core memory $instance "memory"))
      (realloc (core func $instance "cabi_realloc"))))
  (export "many-flags" (func $many_flags)))
