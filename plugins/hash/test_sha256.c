/* Native tests of sha256.c against FIPS 180-4's examples:
 * `python3 -m ziglang cc test_sha256.c sha256.c -o t && ./t` (files named test_*.c are not built
 * into the plugin). */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "sha256.h"

static void check(const char *input, size_t repeat, const char *expected) {
    sha256 h;
    sha256_init(&h);
    for (size_t i = 0; i < repeat; i++) sha256_update(&h, input, strlen(input));
    unsigned char digest[32];
    sha256_finish(&h, digest);
    char hex[65];
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    if (strcmp(hex, expected) != 0) {
        fprintf(stderr, "sha256(%s x%zu) = %s, expected %s\n", input, repeat, hex, expected);
        assert(0);
    }
}

int main(void) {
    check("", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check("abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    check("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    check("a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    puts("ok");
    return 0;
}
