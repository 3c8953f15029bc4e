"""A plain (non-cordon) Python component whose exports are component-model `async func`s.

componentize-py 0.25.1 generates `async def` abstract methods for WIT `async func` exports; the
implementation must be `async def` too (it is run by componentize-py's own event loop through
the async-lift callback ABI). A WIT `result<T, E>` return is `-> T` in Python; the error case is
`raise Err(value)`.
"""

from componentize_py_types import Err

import wit_world
from wit_world import Greeting


class WitWorld(wit_world.WitWorld):
    async def greet(self, name: str) -> str:
        return f"Hello, {name}!"

    async def greet_with(self, req: Greeting) -> str:
        name = req.name.strip()
        if not name:
            raise Err("name must not be empty")
        if len(name) > 64:
            raise Err(f"name too long: {len(name)} chars (max 64)")
        salutation = req.salutation.strip() or "Hello"
        text = f"{salutation}, {name}!"
        return text.upper() if req.shout else text
