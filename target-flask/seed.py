"""Re-creates the schema and the demo data (run while the app is stopped, or use POST /__test/reset)."""

from bookwell import create_app, db

if __name__ == "__main__":
    app = create_app({"SOCKETIO_ASYNC_MODE": "threading"})
    with app.app_context():
        db.reset()
    print(f"seeded {app.config['DATABASE']}")
