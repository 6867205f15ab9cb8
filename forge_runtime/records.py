"""`record()`: a named-tuple class for the hooks' hot path, without `collections`.

`collections.namedtuple` costs a lean interpreter (the plugin's forge-env) a few
milliseconds on import (`collections`, `operator`, `keyword`, `reprlib`): as much as the
rest of a hook of a session without a goal. The classes made here are plain tuples with
read-only named fields, keyword construction, defaults for trailing fields and a readable
repr: what forge's small value types use of named tuples.
"""


def record(name: str, fields: str, defaults: tuple = ()) -> type:
    """A tuple subclass called `name` with the space-separated `fields`; the last
    `len(defaults)` fields take those defaults."""
    names = tuple(fields.split())
    fallback = dict(zip(names[len(names) - len(defaults):], defaults, strict=True))

    def __new__(cls, *args, **kwargs):
        if len(args) == len(names) and not kwargs:  # the common case, without the loop
            return tuple.__new__(cls, args)
        if len(args) > len(names):
            raise TypeError(f"{name} takes {len(names)} fields, got {len(args)}")
        values = list(args)
        for field in names[len(args):]:
            if field in kwargs:
                values.append(kwargs.pop(field))
            elif field in fallback:
                values.append(fallback[field])
            else:
                raise TypeError(f"{name} is missing its field {field!r}")
        if kwargs:
            raise TypeError(f"{name} has no field {next(iter(kwargs))!r}")
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{field}={value!r}" for field, value in zip(names, self, strict=True))
        return f"{self.__class__.__name__}({inner})"

    def __getnewargs__(self):
        return tuple(self)

    body = {"__slots__": (), "__new__": __new__, "__repr__": __repr__,
            "__getnewargs__": __getnewargs__, "_fields": names}
    for index, field in enumerate(names):
        body[field] = property(lambda self, index=index: self[index])
    return type(name, (tuple,), body)
