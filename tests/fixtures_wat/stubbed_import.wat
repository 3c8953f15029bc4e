;; Test fixture, written by hand: a plain component whose function `environment` runs into a stub,
;; as a component built with stubbed-out imports does (a build tool replaces each WASI function it
;; should not need with one that executes `unreachable`). It prints nothing first, so the trap's
;; message must say where it happened: the stub's name, from the name section `wat` writes.
;; `answer` works, to show the plugin still does after the trap.
;; tests/integration/sandbox.rs assembles it with the `wat` crate.

(component
  (core module $m
    (func $wasi_snapshot_preview1::environ_get (result i32)
      unreachable)
    (func $read_environment (export "environment") (result i32)
      call $wasi_snapshot_preview1::environ_get)
    (func (export "answer") (result i32)
      i32.const 42))
  (core instance $i (instantiate $m))
  (func (export "environment") (result u32) (canon lift (core func $i "environment")))
  (func (export "answer") (result u32) (canon lift (core func $i "answer"))))
