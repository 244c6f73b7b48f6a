from .. import db


def restore_demo_data():
    db.reset()
