"""The one reader (`read`) of every file that comes from outside and the one writer (`write`) of every
file the harness makes: neither follows a symbolic link, the reader bounds what it accepts, and the
writer keeps every file under its output folder."""
