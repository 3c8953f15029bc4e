;; Test fixture, written by hand because no source language we build emits `table.grow`: a cordon
;; plugin (world `cordon-plugin`, canonical ABI by hand) with two tools.
;;   table_bomb  grows a funcref table 10,000 elements at a time until the host refuses, then traps
;;               (what a runtime does when it cannot get more table space);
;;   ping        answers "pong" (to show the plugin still works after the bomb).
;; tests/integration/hostile.rs assembles it with the `wat` crate; the huge-initial-table case
;; replaces the table's declared size below.

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

  (core module $plugin
    (memory (export "memory") 1)
    (table $table 1 funcref) ;; TABLE-DECLARATION (the huge-initial-table test replaces this line)

    ;; Text the results point at.
    (data (i32.const 0x100) "table_bomb")
    (data (i32.const 0x110) "ping")
    (data (i32.const 0x120) "Grows a table until the host refuses, then traps.")
    (data (i32.const 0x160) "Answers pong.")
    (data (i32.const 0x170) "{\"type\":\"object\"}")
    (data (i32.const 0x190) "pong")

    ;; Where the results are laid out (offsets per the canonical ABI).
    (global $tool_specs i32 (i32.const 0x200))  ;; 2 tool-spec records, 36 bytes each
    (global $plugin_info i32 (i32.const 0x300)) ;; list<tool-spec> (ptr, len), option<hook-spec>
    (global $content i32 (i32.const 0x340))     ;; one content: case 0 (text), string (ptr, len)
    (global $output i32 (i32.const 0x380))      ;; result: case 0 (ok), tool-output at +4
    (global $zeroes i32 (i32.const 0x3c0))      ;; case 0 of a variant: allow / keep
    ;; Arguments the host passes in go above here (a bump allocator; every call is a fresh instance).
    (global $heap (mut i32) (i32.const 0x1000))

    (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32)
      (param $size i32) (result i32)
      (local $at i32)
      ;; Round up to the alignment, hand out `size` bytes.
      (local.set $at
        (i32.and
          (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
          (i32.sub (i32.const 0) (local.get $align))))
      (global.set $heap (i32.add (local.get $at) (local.get $size)))
      (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536)))
        (then (drop (memory.grow (i32.const 1)))))
      (local.get $at))

    ;; Writes one tool-spec record: name, label (empty), description, parameters, parallel.
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
      (call $tool_spec (global.get $tool_specs) (i32.const 0x100) (i32.const 10) (i32.const 0x120)
        (i32.const 49))
      (call $tool_spec (i32.add (global.get $tool_specs) (i32.const 36)) (i32.const 0x110)
        (i32.const 4) (i32.const 0x160) (i32.const 13))
      (i32.store offset=0 (global.get $plugin_info) (global.get $tool_specs))
      (i32.store offset=4 (global.get $plugin_info) (i32.const 2))
      (i32.store8 offset=8 (global.get $plugin_info) (i32.const 0)) ;; hook: none
      (global.get $plugin_info))

    ;; execute(call: tool-call): the call's id, name and arguments arrive as (ptr, len) pairs.
    (func (export "execute") (param $id i32) (param $id_len i32) (param $name i32)
      (param $name_len i32) (param $args i32) (param $args_len i32) (result i32)
      ;; "ping" is the only tool name of length 4.
      (if (i32.eq (local.get $name_len) (i32.const 4))
        (then
          (i32.store8 offset=0 (global.get $content) (i32.const 0))
          (i32.store offset=4 (global.get $content) (i32.const 0x190))
          (i32.store offset=8 (global.get $content) (i32.const 4))
          (i32.store8 offset=0 (global.get $output) (i32.const 0))
          (i32.store offset=4 (global.get $output) (global.get $content))
          (i32.store offset=8 (global.get $output) (i32.const 1))
          (i32.store offset=12 (global.get $output) (i32.const 0))
          (i32.store offset=16 (global.get $output) (i32.const 0))
          (return (global.get $output))))
      ;; table_bomb: `table.grow` answers -1 once the host refuses.
      (loop $grow
        (br_if $grow
          (i32.ne (table.grow $table (ref.null func) (i32.const 10000)) (i32.const -1))))
      unreachable)

    ;; Never called (describe declares no hook), but the world requires them.
    (func (export "before-tool-call") (param i32 i32 i32 i32 i32 i32) (result i32)
      (global.get $zeroes))
    (func (export "after-tool-call")
      (param i32 i32 i32 i32 i32 i32) (param i32 i32 i32 i32 i32) (result i32)
      (global.get $zeroes)))

  (core instance $instance (instantiate $plugin))
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
