;; Test fixture, written by hand so the result's size is exact: a plain component (no cordon
;; contract) exporting `many-strings(count: u32) -> list<string>`, which returns `count` empty
;; strings. Each is 8 bytes in the guest (a zero pointer and length, in freshly grown memory) and
;; would be a much larger value on the host once lifted. tests/integration/result_memory.rs
;; assembles it with the `wat` crate.
(component
  (core module $strings
    (memory (export "memory") 1)
    ;; The (pointer, length) of the list goes at 16; the list's elements at 64 KiB, in memory grown
    ;; for them (and so all zeroes: empty strings).
    (func (export "many-strings") (param $count i32) (result i32)
      (local $pages i32)
      (local.set $pages
        (i32.add (i32.shr_u (i32.mul (local.get $count) (i32.const 8)) (i32.const 16)) (i32.const 1)))
      (if (i32.lt_s (memory.grow (local.get $pages)) (i32.const 0))
        (then unreachable))
      (i32.store (i32.const 16) (i32.const 0x10000))
      (i32.store (i32.const 20) (local.get $count))
      (i32.const 16))
    (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
      unreachable))
  (core instance $instance (instantiate $strings))
  (func $many_strings (param "count" u32) (result (list string))
    (canon lift (core func $instance "many-strings") (memory (core memory $instance "memory"))
      (realloc (core func $instance "cabi_realloc"))))
  (export "many-strings" (func $many_strings)))
