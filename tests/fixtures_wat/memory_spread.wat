;; Test fixture, written by hand because the languages we build give a plugin one linear memory:
;; a cordon plugin (world `cordon-plugin`, canonical ABI by hand) made of eight core instances, each
;; with a linear memory of its own (the plugin's module and seven instances of a memory "bank"),
;; with two tools.
;;   memory_spread  grows each of the eight memories 16 pages (1 MiB) at a time until the host
;;                  refuses, and answers the total number of pages it got across all of them;
;;   ping           answers "pong".
;; tests/integration/hostile_host.rs assembles it with the `wat` crate. A limit that applied to each
;; memory alone would let this plugin hold eight times its memory limit.

(component
  ;; The types of cordon:plugin@0.1.0 (wit/plugin-0.1.0/plugin.wit), as the host checks them.
  (type $execution-mode (enum "parallel" "sequential"))
  (type $tool-spec (record
    (field "name" string)
    (field "label" string)
    (field "description" string)
    (field "parameters" string)
    (field "execution-mode" $execution-mode)))
  (type $hook-spec (record (field "tools" (list string)) (field "before" bool) (field "after" bool)))
  (type $plugin-info (record (field "tools" (list $tool-spec)) (field "hook" (option $hook-spec))))
  (type $image (record (field "mime-type" string) (field "data" (list u8))))
  (type $content (variant (case "text" string) (case "image" $image)))
  (type $tool-call (record (field "id" string) (field "name" string) (field "arguments" string)))
  (type $tool-output (record (field "content" (list $content)) (field "details" string)))
  (type $failure-kind (enum "tool-error" "capability-denied"))
  (type $tool-failure (record
    (field "kind" $failure-kind)
    (field "message" string)
    (field "details" string)))
  (type $tool-result (record
    (field "content" (list $content))
    (field "details" string)
    (field "is-error" bool)))
  (type $before-decision (variant (case "allow") (case "block" string) (case "rewrite" string)))
  (type $after-decision (variant (case "keep") (case "replace" $tool-result)))

  ;; A memory of its own, and a function that grows it until refused, answering the pages gained.
  (core module $bank
    (memory 0)
    (func (export "grow_all") (result i32)
      (local $total i32)
      (block $done (loop $again
        (br_if $done (i32.eq (memory.grow (i32.const 16)) (i32.const -1)))
        (local.set $total (i32.add (local.get $total) (i32.const 16))) (br $again)))
      (local.get $total)))
  (core instance $bank1 (instantiate $bank))
  (core instance $bank2 (instantiate $bank))
  (core instance $bank3 (instantiate $bank))
  (core instance $bank4 (instantiate $bank))
  (core instance $bank5 (instantiate $bank))
  (core instance $bank6 (instantiate $bank))
  (core instance $bank7 (instantiate $bank))

  (core module $plugin
    (import "bank1" "grow_all" (func $grow1 (result i32)))
    (import "bank2" "grow_all" (func $grow2 (result i32)))
    (import "bank3" "grow_all" (func $grow3 (result i32)))
    (import "bank4" "grow_all" (func $grow4 (result i32)))
    (import "bank5" "grow_all" (func $grow5 (result i32)))
    (import "bank6" "grow_all" (func $grow6 (result i32)))
    (import "bank7" "grow_all" (func $grow7 (result i32)))
    (memory (export "memory") 1)

    (data (i32.const 0x100) "memory_spread")
    (data (i32.const 0x110) "ping")
    (data (i32.const 0x120) "Grows eight memories until the host refuses.")
    (data (i32.const 0x160) "Answers pong.")
    (data (i32.const 0x170) "{\"type\":\"object\"}")
    (data (i32.const 0x190) "pong")

    (global $tool_specs i32 (i32.const 0x200))
    (global $plugin_info i32 (i32.const 0x300))
    (global $content i32 (i32.const 0x340))
    (global $output i32 (i32.const 0x380))
    (global $zeroes i32 (i32.const 0x3c0))
    (global $digits_end i32 (i32.const 0x420)) ;; decimal digits are written backwards from here
    (global $heap (mut i32) (i32.const 0x1000))

    (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32)
      (param $size i32) (result i32)
      (local $at i32)
      (local.set $at
        (i32.and
          (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
          (i32.sub (i32.const 0) (local.get $align))))
      (global.set $heap (i32.add (local.get $at) (local.get $size)))
      (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536)))
        (then (drop (memory.grow (i32.const 1)))))
      (local.get $at))

    (func $tool_spec (param $at i32) (param $name i32) (param $name_len i32) (param $desc i32)
      (param $desc_len i32)
      (i32.store offset=0 (local.get $at) (local.get $name))
      (i32.store offset=4 (local.get $at) (local.get $name_len))
      (i32.store offset=8 (local.get $at) (i32.const 0))
      (i32.store offset=12 (local.get $at) (i32.const 0))
      (i32.store offset=16 (local.get $at) (local.get $desc))
      (i32.store offset=20 (local.get $at) (local.get $desc_len))
      (i32.store offset=24 (local.get $at) (i32.const 0x170))
      (i32.store offset=28 (local.get $at) (i32.const 17))
      (i32.store8 offset=32 (local.get $at) (i32.const 0)))

    (func (export "describe") (result i32)
      (call $tool_spec (global.get $tool_specs) (i32.const 0x100) (i32.const 13) (i32.const 0x120)
        (i32.const 44))
      (call $tool_spec (i32.add (global.get $tool_specs) (i32.const 36)) (i32.const 0x110)
        (i32.const 4) (i32.const 0x160) (i32.const 13))
      (i32.store offset=0 (global.get $plugin_info) (global.get $tool_specs))
      (i32.store offset=4 (global.get $plugin_info) (i32.const 2))
      (i32.store8 offset=8 (global.get $plugin_info) (i32.const 0))
      (global.get $plugin_info))

    ;; Pages gained across the banks' memories and then the main one.
    (func $grow_all (result i32)
      (local $total i32)
      (local.set $total (i32.add (call $grow1) (call $grow2)))
      (local.set $total (i32.add (local.get $total) (i32.add (call $grow3) (call $grow4))))
      (local.set $total (i32.add (local.get $total) (i32.add (call $grow5) (call $grow6))))
      (local.set $total (i32.add (local.get $total) (call $grow7)))
      ;; The main memory last: the arguments and results live in it.
      (block $done (loop $again
        (br_if $done (i32.eq (memory.grow (i32.const 16)) (i32.const -1)))
        (local.set $total (i32.add (local.get $total) (i32.const 16))) (br $again)))
      (local.get $total))

    ;; Writes `value` in decimal ending at $digits_end; returns where the text starts.
    (func $decimal (param $value i32) (result i32)
      (local $at i32)
      (local.set $at (global.get $digits_end))
      (loop $digit
        (local.set $at (i32.sub (local.get $at) (i32.const 1)))
        (i32.store8 (local.get $at)
          (i32.add (i32.const 48) (i32.rem_u (local.get $value) (i32.const 10))))
        (local.set $value (i32.div_u (local.get $value) (i32.const 10)))
        (br_if $digit (i32.ne (local.get $value) (i32.const 0))))
      (local.get $at))

    (func (export "execute") (param $id i32) (param $id_len i32) (param $name i32)
      (param $name_len i32) (param $args i32) (param $args_len i32) (result i32)
      (local $text i32)
      (local $text_len i32)
      (local.set $text (i32.const 0x190))
      (local.set $text_len (i32.const 4))
      ;; "memory_spread" is the only tool name of length 13.
      (if (i32.eq (local.get $name_len) (i32.const 13))
        (then
          (local.set $text (call $decimal (call $grow_all)))
          (local.set $text_len (i32.sub (global.get $digits_end) (local.get $text)))))
      (i32.store8 offset=0 (global.get $content) (i32.const 0))
      (i32.store offset=4 (global.get $content) (local.get $text))
      (i32.store offset=8 (global.get $content) (local.get $text_len))
      (i32.store8 offset=0 (global.get $output) (i32.const 0))
      (i32.store offset=4 (global.get $output) (global.get $content))
      (i32.store offset=8 (global.get $output) (i32.const 1))
      (i32.store offset=12 (global.get $output) (i32.const 0))
      (i32.store offset=16 (global.get $output) (i32.const 0))
      (global.get $output))

    (func (export "before-tool-call") (param i32 i32 i32 i32 i32 i32) (result i32)
      (global.get $zeroes))
    (func (export "after-tool-call")
      (param i32 i32 i32 i32 i32 i32) (param i32 i32 i32 i32 i32) (result i32)
      (global.get $zeroes)))

  (core instance $instance (instantiate $plugin
    (with "bank1" (instance $bank1)) (with "bank2" (instance $bank2)) (with "bank3" (instance $bank3))
    (with "bank4" (instance $bank4)) (with "bank5" (instance $bank5)) (with "bank6" (instance $bank6))
    (with "bank7" (instance $bank7))))
  (alias core export $instance "memory" (core memory $memory))
  (alias core export $instance "cabi_realloc" (core func $realloc))

  (func $describe (result $plugin-info)
    (canon lift (core func $instance "describe") (memory $memory)))
  (func $execute (param "call" $tool-call) (result (result $tool-output (error $tool-failure)))
    (canon lift (core func $instance "execute") (memory $memory) (realloc $realloc)))
  (func $before-tool-call (param "call" $tool-call) (result $before-decision)
    (canon lift (core func $instance "before-tool-call") (memory $memory) (realloc $realloc)))
  (func $after-tool-call (param "call" $tool-call) (param "outcome" $tool-result)
    (result $after-decision)
    (canon lift (core func $instance "after-tool-call") (memory $memory) (realloc $realloc)))

  (instance $exports
    (export "execution-mode" (type $execution-mode))
    (export "tool-spec" (type $tool-spec))
    (export "hook-spec" (type $hook-spec))
    (export "plugin-info" (type $plugin-info))
    (export "image" (type $image))
    (export "content" (type $content))
    (export "tool-call" (type $tool-call))
    (export "tool-output" (type $tool-output))
    (export "failure-kind" (type $failure-kind))
    (export "tool-failure" (type $tool-failure))
    (export "tool-result" (type $tool-result))
    (export "before-decision" (type $before-decision))
    (export "after-decision" (type $after-decision))
    (export "describe" (func $describe))
    (export "execute" (func $execute))
    (export "before-tool-call" (func $before-tool-call))
    (export "after-tool-call" (func $after-tool-call)))
  (export "cordon:plugin/plugin@0.1.0" (instance $exports)))
