def register_views(app):
    from . import account, admin, desk, portal, public, templating, testing
    from .api import api

    templating.init_app(app)
    app.register_blueprint(public.bp)
    app.register_blueprint(account.bp, url_prefix="/account")
    app.register_blueprint(portal.bp)
    app.register_blueprint(desk.bp, url_prefix="/desk")
    app.register_blueprint(admin.bp)
    app.register_blueprint(api)
    if app.config["TEST_RESET"]:
        app.register_blueprint(testing.bp)
