"""A minimal XDND (version 5) drag source with python3-xlib, for the
drag-and-drop test: it drags a list of files onto a window as a file manager
would. Protocol: https://freedesktop.org/wiki/Specifications/XDND/
  source -> target  XdndEnter (offers text/uri-list), XdndPosition (a point, copy)
  target -> source  XdndStatus (accepts or not)
  source -> target  XdndDrop
  target            converts the XdndSelection (owned by the source) to text/uri-list:
  source            answers the SelectionRequest with the URI list
  target -> source  XdndFinished"""
import time
import urllib.parse

from Xlib import X, Xatom, display, protocol

XDND_VERSION = 5


class DropFailed(Exception):
    pass


def drop_files(window_id, paths, timeout=10.0):
    """Drags `paths` onto the X window `window_id` and drops them at its centre.
    Returns a log of the steps; raises DropFailed with the step that failed."""
    d = display.Display()
    atom = d.intern_atom
    uri_list = atom("text/uri-list")
    xdnd_selection = atom("XdndSelection")
    target = d.create_resource_object("window", window_id)
    log = []

    aware = target.get_full_property(atom("XdndAware"), Xatom.ATOM)
    if not aware or not aware.value:
        raise DropFailed(f"window 0x{window_id:x} has no XdndAware property: it does not accept drops")
    log.append(f"XdndAware version {aware.value[0]}")

    root = d.screen().root
    source = root.create_window(-10, -10, 1, 1, 0, X.CopyFromParent, event_mask=X.PropertyChangeMask)
    source.set_selection_owner(xdnd_selection, X.CurrentTime)
    if d.get_selection_owner(xdnd_selection) != source:
        raise DropFailed("could not own the XdndSelection")

    geometry = target.get_geometry()
    origin = target.translate_coords(root, 0, 0)  # the window's top left in root coordinates
    x_root, y_root = -origin.x + geometry.width // 2, -origin.y + geometry.height // 2

    def send(kind, data):
        event = protocol.event.ClientMessage(window=target, client_type=atom(kind),
                                             data=(32, (data + [0] * 5)[:5]))
        target.send_event(event, event_mask=X.NoEventMask)
        d.flush()
        log.append(kind)

    def next_event(what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if d.pending_events():
                return d.next_event()
            time.sleep(0.01)
        raise DropFailed(f"timed out waiting for {what}; so far: {log}")

    payload = "".join("file://" + urllib.parse.quote(p) + "\r\n" for p in paths).encode()
    send("XdndEnter", [source.id, XDND_VERSION << 24, uri_list])
    send("XdndPosition", [source.id, 0, (x_root << 16) | y_root, X.CurrentTime, atom("XdndActionCopy")])
    finished = False
    dropped = False
    while not finished:
        event = next_event("XdndStatus" if not dropped else "the selection request and XdndFinished")
        if event.type == X.ClientMessage and event.client_type == atom("XdndStatus"):
            accepted = event.data[1][1] & 1
            log.append(f"XdndStatus accept={accepted}")
            if not accepted:
                raise DropFailed(f"the target refused the drop: {log}")
            if not dropped:
                send("XdndDrop", [source.id, 0, X.CurrentTime])
                dropped = True
        elif event.type == X.SelectionRequest:
            log.append(f"SelectionRequest for {d.get_atom_name(event.target)}")
            requestor = event.requestor
            prop = event.property if event.property != X.NONE else event.target
            if event.target == uri_list:
                requestor.change_property(prop, uri_list, 8, payload)
            else:
                prop = X.NONE  # only text/uri-list is offered
            notify = protocol.event.SelectionNotify(time=event.time, requestor=requestor, selection=event.selection,
                                                    target=event.target, property=prop)
            requestor.send_event(notify, event_mask=X.NoEventMask)
            d.flush()
        elif event.type == X.ClientMessage and event.client_type == atom("XdndFinished"):
            log.append("XdndFinished")
            finished = True
    source.destroy()
    d.close()
    return log
